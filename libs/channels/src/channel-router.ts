import { Durables, Streams, type ChannelInbound, type ChannelOutbound, type Envelope } from '@agent-platform/contracts';
import { isRetryable, type Bus, type Subscription } from '@agent-platform/bus';
import type { Clock, InvocationService, RunOrigin, TranscriptStore } from '@agent-platform/domain';
import { inSpan, type Logger } from '@agent-platform/observability';
import { StoreDuplicateError, type Store } from '@agent-platform/store';
import { REPLY_ID_META } from './channel-kind.ts';
import { CHANNEL_RECORD_TTL_MS, channelCollections, type ChannelMessageRecord } from './channel-record.ts';

const MAX_DELIVER = 20;
const BACKOFF_MS = [500, 1_000, 2_000, 5_000, 10_000];

export interface ChannelRouterDeps {
  store: Store;
  bus: Bus;
  clock: Clock;
  logger: Logger;
  /** The worker's invocation service (the agent answers `default_agent` messages). */
  invocation: Pick<InvocationService, 'execute'>;
  /** Starts a run of `default_workflow` with the message as input, or returns the run an equal key started. */
  startRun: (workflowId: string, request: { input: string; idempotencyKey: string; origin: RunOrigin }, caller: { identity: string }) => Promise<{ run: { id: string } }>;
  transcripts: TranscriptStore;
  /**
   * Called once per new inbound message with the agent it is for (the channel's `default_agent`,
   * null otherwise): the composition roots emit `channel.message.received` here (docs/events.md).
   */
  onReceived?: (inbound: ChannelInbound, agentId: string | null) => Promise<void> | void;
  /** Messages handled at once by this process. */
  concurrency?: number;
  /** The inbound consumer's ack wait (`[channels] inbound_redelivery_secs`; default 5 minutes). */
  ackWaitMs?: number;
  /** How often the reply sweep looks at messages that started a run (channel-run-replies.ts; default 30 s). */
  replySweepMs?: number;
  /** How long after its end a run's reply is left to the `onRunEnded` hook before the sweep sends it (default 30 s). */
  replyGraceMs?: number;
}

/**
 * A reply travels as a ChannelOutbound on `channel.outbound`; the bridge holding the channel sends it.
 * Its envelope id goes along as `meta.reply_id` (the webhook kind's `webhook-id`, the same on every
 * retry); the inbound message's own meta (Telegram's `message_id`, an email's subject...) is kept
 * as it came, so the kind can thread the reply under it.
 */
export async function publishReply(bus: Bus, envelopeId: string, reply: ChannelOutbound, at: Date): Promise<void> {
  await bus.publish<ChannelOutbound>(Streams.channelOutbound, {
    id: envelopeId,
    correlation_id: envelopeId,
    attempt: 1,
    occurred_at: at.toISOString(),
    data: { ...reply, meta: { ...reply.meta, [REPLY_ID_META]: envelopeId } },
  });
}

/**
 * Routes inbound channel messages BY CHANNEL ID (never by kind: two channels of one kind each
 * reach their own agent; the spec's known defect is not reproduced). Consumes `channel.inbound`
 * under the durable `channel-workers`, shared by every agent worker.
 *
 * Redelivery is expected (a worker killed mid-answer): the agent is invoked with an idempotency
 * key derived from the envelope id, so a second attempt gets the cached reply; the transcript
 * append is keyed by the envelope id; the reply's envelope id is derived from the inbound one;
 * and a `channel_messages` row marks the message handled, so a message is answered once.
 */
export async function consumeChannelInbound(deps: ChannelRouterDeps): Promise<Subscription> {
  const handle = inboundHandler(deps);
  return deps.bus.consume<ChannelInbound>(
    Streams.channelInbound,
    {
      durable: Durables.channelWorkers,
      maxDeliver: MAX_DELIVER,
      backoffMs: BACKOFF_MS,
      ackWaitMs: deps.ackWaitMs ?? 5 * 60_000,
      concurrency: deps.concurrency ?? 8,
      onDeadLetter: (envelope, error) => deps.logger.error({ err: error, message_id: envelope.id }, 'an inbound channel message was dead-lettered after its last attempt'),
    },
    // The inbound message's span (docs/observability.md): kind and channel, never its text or sender.
    (envelope) => inSpan('channel.receive', { attributes: { 'channel.kind': envelope.data.kind, 'channel.id': envelope.data.channel_id } }, () => handle(envelope)),
  );
}

export function inboundHandler(deps: ChannelRouterDeps): (envelope: Envelope<ChannelInbound>) => Promise<void> {
  const { channels, messages } = channelCollections(deps.store);
  const log = deps.logger.child({ service: 'channel-router' });

  const mark = async (id: string, state: ChannelMessageRecord['state'], extra: Partial<ChannelMessageRecord> = {}): Promise<void> => {
    await messages.update(id, (row) => (row === null ? null : { ...row.doc, ...extra, state, at: deps.clock.now().toISOString() }));
  };

  return async (envelope) => {
    const inbound = envelope.data;
    const seen = (await messages.get(envelope.id))?.doc;
    if (seen !== undefined && seen.state !== 'received') return;
    const channel = (await channels.get(inbound.channel_id))?.doc;
    if (seen === undefined) {
      const at = deps.clock.now();
      let inserted = false;
      try {
        await messages.insert({
          id: envelope.id,
          channel_id: inbound.channel_id,
          conversation: inbound.conversation,
          state: 'received',
          at: at.toISOString(),
          expires_at: new Date(at.getTime() + CHANNEL_RECORD_TTL_MS).toISOString(),
        });
        inserted = true;
      } catch (error) {
        if (!(error instanceof StoreDuplicateError)) throw error;
      }
      // At most once per message (the row above exists now); its failure never loses the message.
      try {
        if (inserted) await deps.onReceived?.(inbound, channel?.default_agent ?? null);
      } catch (err) {
        log.warn({ err, message_id: envelope.id }, 'the received-message hook failed');
      }
    }
    if (channel === undefined) {
      log.warn({ channel_id: inbound.channel_id, message_id: envelope.id }, 'inbound message for a channel that no longer exists; dropped');
      await mark(envelope.id, 'dropped', { detail: 'channel deleted' });
      return;
    }
    try {
      if (channel.default_agent !== null) await answerWithAgent(deps, envelope, channel.default_agent);
      else if (channel.default_workflow !== null) {
        const { run } = await deps.startRun(
          channel.default_workflow,
          {
            input: inbound.text,
            idempotencyKey: `channel:${envelope.id}`,
            origin: { channel: { channel_id: channel.id, conversation: inbound.conversation, thread: inbound.thread, in_reply_to: inbound.peer_message_id } },
          },
          { identity: `channel:${channel.id}` },
        );
        await mark(envelope.id, 'started', { run_id: run.id });
        return;
      } else {
        log.warn({ channel_id: channel.id, message_id: envelope.id }, 'channel has neither default_agent nor default_workflow; the message is recorded and dropped');
        await mark(envelope.id, 'dropped', { detail: 'no default_agent or default_workflow' });
        return;
      }
    } catch (error) {
      if (isRetryable(error)) throw error;
      log.warn({ err: error, channel_id: channel.id, message_id: envelope.id }, 'an inbound channel message could not be answered; recorded as failed');
      await mark(envelope.id, 'failed', { detail: error instanceof Error ? error.message.slice(0, 500) : 'failed' });
      return;
    }
    await mark(envelope.id, 'answered');
  };
}

async function answerWithAgent(deps: ChannelRouterDeps, envelope: Envelope<ChannelInbound>, agentId: string): Promise<void> {
  const inbound = envelope.data;
  const { result } = await deps.invocation.execute({
    agent_id: agentId,
    source: { Channel: { channel_id: inbound.channel_id, kind: inbound.kind, conversation: inbound.conversation, thread: inbound.thread, sender: inbound.sender } },
    message: inbound.text,
    idempotency_key: `channel:${envelope.id}`,
    correlation_id: envelope.correlation_id,
    caller: `channel:${inbound.channel_id}`,
  });
  const at = deps.clock.now().toISOString();
  await deps.transcripts.append({ agent_id: agentId, channel_id: inbound.channel_id, conversation: inbound.conversation }, envelope.id, [
    { role: 'user', content: inbound.text, at: inbound.received_at },
    { role: 'assistant', content: result.content, at },
  ]);
  await publishReply(
    deps.bus,
    `${envelope.id}:reply`,
    { channel_id: inbound.channel_id, conversation: inbound.conversation, thread: inbound.thread, text: result.content, in_reply_to: inbound.peer_message_id, meta: inbound.meta },
    deps.clock.now(),
  );
}
