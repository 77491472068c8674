import { createServer, type Server } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { guardedFetch } from '@agent-platform/net';
import { createLogger } from '@agent-platform/observability';
import { waitUntil } from '@agent-platform/testkit';
import {
  ChannelConfigError,
  type ChannelConfig,
  type ChannelConnection,
  type ChannelContext,
  type ChannelKind,
  type ChannelStatus,
  type InboundMessage,
} from '../channel-kind.ts';

/** What the peer got from the channel's `send`, in the platform's terms. */
export interface PeerReceived {
  conversation: string;
  thread: string | null;
  text: string;
}

/** One message the peer sent in: what `deliver` must show, and how the peer sends it again. */
export interface PeerSent {
  conversation: string;
  text: string;
  /** Checked when set (protocols whose thread is known before the message arrives). */
  thread?: string | null;
  /** The peer sends the very same message again (a retry, a redelivery). */
  resend(): Promise<void>;
}

/** A kind, its local peer, and the configs and moves the suite needs; made once per file. */
export interface ConformanceHarness {
  /** Configs `check` must accept. */
  goodConfig: ChannelConfig;
  /** Accepted by `check`, refused by the peer at `open`. */
  badCredentialsConfig: ChannelConfig;
  /** What the `{Error}` message must say for those credentials (that the peer refused them). */
  badCredentialsError?: RegExp;
  /**
   * For kinds that have nothing to log in to at open and meet the peer's check only when they
   * send (`webhook`: the peer refuses a reply's signature). The suite then sends one message on
   * the channel opened with `badCredentialsConfig`: the send must fail and the status turn to
   * `{Error}` (it may be `Connected` before that send, never after the refusal).
   */
  credentialsCheckedOnSend?: boolean;
  /** Configs `check` must refuse, each naming `field`. */
  badConfigs: { why: string; config: ChannelConfig; field: string }[];
  /** The peer sends one message (each call a new one). */
  sendInbound(text: string): Promise<PeerSent>;
  /** What the peer received from `send` so far, oldest first. */
  received(): PeerReceived[];
  close(): Promise<void>;
}

export interface ConformanceEnv {
  /**
   * For kinds with `receiveHttp`: the URL a stand-in api node listens on. It runs the kind's
   * `receiveHttp` with the open channel's config and delivers what it returns, as
   * `POST /channels/{id}/inbound` does.
   */
  inboundUrl: string;
}

interface Recording {
  context: ChannelContext;
  statuses: ChannelStatus[];
  delivered: InboundMessage[];
  /** The next `n` deliveries fail (the bus is down): the adapter must not acknowledge them. */
  failNext(n: number): void;
}

let channelSeq = 0;

function recordingContext(config: ChannelConfig): Recording {
  const statuses: ChannelStatus[] = [];
  const delivered: InboundMessage[] = [];
  let failures = 0;
  channelSeq += 1;
  const context: ChannelContext = {
    channelId: `conformance-${process.pid}-${Date.now()}-${channelSeq}`,
    config,
    async deliver(message) {
      if (failures > 0) {
        failures -= 1;
        throw new Error('bus unavailable (test)');
      }
      delivered.push(message);
    },
    setStatus: (status) => statuses.push(status),
    fetch: guardedFetch(() => true),
    allowPrivateTargets: true,
    logger: createLogger({ level: 'silent', bufferLines: 10, destination: 'silent' }).logger,
  };
  return { context, statuses, delivered, failNext: (n) => (failures = n) };
}

/**
 * Waits until `count` deliveries carry `text` and returns the last: matching by text keeps the
 * suite exact about its own messages while a peer may hand an earlier, unconfirmed one over again
 * (at-least-once protocols do).
 */
async function deliveredWith(recording: Recording, text: string, count: number): Promise<InboundMessage> {
  const matching = (): InboundMessage[] => recording.delivered.filter((m) => m.text === text);
  await waitUntil(() => matching().length >= count, {
    timeoutMs: 5_000,
    message: `"${text}" to be delivered ${count} time(s)`,
  });
  expect(matching()).toHaveLength(count);
  return matching()[count - 1] as InboundMessage;
}

const isError = (status: ChannelStatus | undefined): boolean => typeof status === 'object';

/** Handles that keep the process alive, by type (sockets, servers, timers...). */
function liveResources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const type of process.getActiveResourcesInfo()) counts.set(type, (counts.get(type) ?? 0) + 1);
  return counts;
}

function noMoreThan(baseline: Map<string, number>): boolean {
  for (const [type, count] of liveResources()) if (count > (baseline.get(type) ?? 0)) return false;
  return true;
}

/** How long the suite watches for a delivery that must not happen. */
const QUIET_MS = 400;

/**
 * The one suite every channel kind passes (STYLE §1), run with the kind's local peer:
 * libs/channels/src/kinds/<kind>-kind.test.ts.
 */
export function channelKindConformance(
  kind: ChannelKind,
  setup: (env: ConformanceEnv) => Promise<ConformanceHarness>,
): void {
  describe(`ChannelKind conformance: ${kind.kind}`, () => {
    let harness: ConformanceHarness;
    let standIn: Server | undefined;
    /** The channel the stand-in api node delivers to. */
    let current: Recording | undefined;
    const open: ChannelConnection[] = [];

    beforeAll(async () => {
      let inboundUrl = '';
      if (kind.receiveHttp !== undefined) {
        standIn = startStandIn(kind, () => current);
        await new Promise<void>((resolve) => standIn?.listen(0, '127.0.0.1', resolve));
        const address = standIn.address();
        if (address === null || typeof address === 'string') throw new Error('no stand-in port');
        inboundUrl = `http://127.0.0.1:${address.port}/channels/conformance/inbound`;
      }
      harness = await setup({ inboundUrl });
    });
    afterEach(async () => {
      current = undefined;
      await Promise.all(open.splice(0).map((c) => c.close()));
    });
    afterAll(async () => {
      await harness?.close();
      standIn?.closeAllConnections();
      await new Promise<void>((resolve) => (standIn ? standIn.close(() => resolve()) : resolve()));
    });

    async function openChannel(
      config: ChannelConfig,
    ): Promise<{ recording: Recording; connection: ChannelConnection }> {
      const recording = recordingContext(config);
      current = recording;
      const connection = await kind.open(recording.context);
      open.push(connection);
      return { recording, connection };
    }

    async function openConnected(): Promise<{ recording: Recording; connection: ChannelConnection }> {
      const opened = await openChannel(harness.goodConfig);
      await waitUntil(() => opened.recording.statuses.at(-1) === 'Connected', {
        message: `${kind.kind} to report Connected`,
      });
      return opened;
    }

    it('check accepts the good config and refuses bad ones, naming the field', () => {
      expect(() => kind.check(harness.goodConfig)).not.toThrow();
      expect(() => kind.check(harness.badCredentialsConfig)).not.toThrow();
      for (const bad of harness.badConfigs) {
        let thrown: unknown;
        try {
          kind.check(bad.config);
        } catch (error) {
          thrown = error;
        }
        expect(thrown, bad.why).toBeInstanceOf(ChannelConfigError);
        expect((thrown as ChannelConfigError).field, bad.why).toBe(bad.field);
        expect((thrown as Error).message, bad.why).toContain(bad.field);
      }
    });

    it('lists its secret fields', () => {
      expect(kind.secretFields.length).toBeGreaterThan(0);
      for (const field of kind.secretFields) expect(typeof field).toBe('string');
    });

    it('declares every field it reads: the secrets, the destinations and each field of the good config', () => {
      // The routes refuse any field not in `fields` and keep a placeholder secret only while no
      // destination field changes: a field read but not declared would be refused or ignored there.
      const undeclared = [...kind.secretFields, ...kind.destinationFields, ...Object.keys(harness.goodConfig)].filter((f) => !kind.fields.includes(f));
      expect(undeclared).toEqual([]);
      expect(kind.destinationFields.filter((f) => kind.secretFields.includes(f))).toEqual([]);
    });

    it('open with credentials the peer refuses reports {Error}, never Connected', async () => {
      const { recording, connection } = await openChannel(harness.badCredentialsConfig);
      if (harness.credentialsCheckedOnSend === true)
        await expect(
          connection.send({ channel_id: recording.context.channelId, conversation: 'c', thread: null, text: 'refused', in_reply_to: null, meta: {} }),
        ).rejects.toThrow();
      await waitUntil(() => isError(recording.statuses.at(-1)), {
        message: `${kind.kind} to report an Error status`,
      });
      const firstError = recording.statuses.findIndex(isError);
      if (harness.credentialsCheckedOnSend === true) expect(recording.statuses.slice(firstError)).not.toContain('Connected');
      else expect(recording.statuses).not.toContain('Connected');
      const status = recording.statuses.at(-1) as { Error: string };
      expect(status.Error.length).toBeGreaterThan(0);
      if (harness.badCredentialsError !== undefined)
        expect(status.Error).toMatch(harness.badCredentialsError);
      for (const field of kind.secretFields) {
        const secret = harness.badCredentialsConfig[field];
        if (typeof secret === 'string') expect(status.Error).not.toContain(secret);
      }
    });

    it('open with good credentials reports Connected', async () => {
      const { recording } = await openConnected();
      expect(recording.statuses.some(isError)).toBe(false);
    });

    it('an inbound message reaches deliver with its peer id, conversation and text; a resend keeps the peer id', async () => {
      const { recording } = await openConnected();
      const sent = await harness.sendInbound('hello from the peer');
      const first = await deliveredWith(recording, 'hello from the peer', 1);
      expect(first.conversation).toBe(sent.conversation);
      expect(first.peer_message_id.length).toBeGreaterThan(0);
      if (sent.thread !== undefined) expect(first.thread).toBe(sent.thread);

      await sent.resend();
      const again = await deliveredWith(recording, 'hello from the peer', 2);
      expect(again.peer_message_id).toBe(first.peer_message_id);
      expect(again.conversation).toBe(first.conversation);

      const other = await harness.sendInbound('a different message');
      const second = await deliveredWith(recording, 'a different message', 1);
      expect(second.peer_message_id).not.toBe(first.peer_message_id);
      expect(second.conversation).toBe(other.conversation);
    });

    it('send reaches the peer in the same conversation and thread', async () => {
      const { recording, connection } = await openConnected();
      await harness.sendInbound('please answer');
      const inbound = await deliveredWith(recording, 'please answer', 1);
      const before = harness.received().length;
      await connection.send({
        channel_id: recording.context.channelId,
        conversation: inbound.conversation,
        thread: inbound.thread,
        text: 'here is your answer',
        in_reply_to: inbound.peer_message_id,
        meta: inbound.meta,
      });
      await waitUntil(() => harness.received().length > before, { message: 'the peer to receive the reply' });
      expect(harness.received().at(-1)).toEqual({
        conversation: inbound.conversation,
        thread: inbound.thread,
        text: 'here is your answer',
      });
    });

    it('after close nothing more is delivered and no socket or timer is left', async () => {
      const baseline = liveResources();
      const { recording, connection } = await openConnected();
      await harness.sendInbound('before close');
      await deliveredWith(recording, 'before close', 1);
      await connection.close();
      open.splice(open.indexOf(connection), 1);
      current = undefined;
      if (kind.receiveHttp === undefined) {
        await harness.sendInbound('after close').catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
        expect(recording.delivered.filter((m) => m.text === 'after close')).toEqual([]);
      }
      await waitUntil(() => noMoreThan(baseline), {
        timeoutMs: 3_000,
        message: `${kind.kind} to release its sockets and timers (live: ${JSON.stringify([...liveResources()])}, before open: ${JSON.stringify([...baseline])})`,
      });
      await expect(
        connection.send({
          channel_id: recording.context.channelId,
          conversation: 'x',
          thread: null,
          text: 't',
          in_reply_to: null,
          meta: {},
        }),
      ).rejects.toThrow();
    });
  });
}

/** The part of `POST /channels/{id}/inbound` that concerns a kind: receiveHttp, then deliver. */
function startStandIn(kind: ChannelKind, channel: () => Recording | undefined): Server {
  return createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      response.setHeader('connection', 'close');
      const recording = channel();
      if (recording === undefined || kind.receiveHttp === undefined) {
        response.writeHead(404).end();
        return;
      }
      const result = kind.receiveHttp(recording.context.config, {
        headers: request.headers,
        rawBody: Buffer.concat(chunks),
        now: new Date(),
      });
      Promise.all(result.messages.map((m) => recording.context.deliver(m)))
        .then(() =>
          response
            .writeHead(result.status, { 'content-type': 'application/json' })
            .end(JSON.stringify(result.body)),
        )
        .catch(() => response.writeHead(500).end());
    });
  });
}
