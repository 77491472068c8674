import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import type { ChannelOutbound } from '@agent-platform/contracts';
import type { IClientOptions, MqttClient } from 'mqtt';
import type {
  ChannelConfig,
  ChannelConnection,
  ChannelContext,
  ChannelKind,
  InboundMessage,
} from '../channel-kind.ts';
import { ChannelConfigError } from '../channel-kind.ts';
import { optionalInteger, optionalString, requiredString, requiredUrl } from './config-fields.ts';
import { resolveGuardedHost } from './guarded-host.ts';
import { pause } from './pause.ts';

const PROTOCOLS = ['mqtt:', 'mqtts:'] as const;
const DEFAULT_PORTS: Record<string, number> = { 'mqtt:': 1883, 'mqtts:': 8883 };
/** CONNACK codes that mean "your credentials": 4/5 in MQTT 3.1.1, 134/135 in MQTT 5. */
const AUTH_REFUSED = new Set([4, 5, 134, 135]);
const RETRY_DELAY_MS = 1_000;
const FIRST_CONNECT_TIMEOUT_MS = 10_000;

interface MqttConfig {
  url: URL;
  username: string | undefined;
  password: string | undefined;
  inboundTopic: string;
  outboundTopic: string;
  qos: 0 | 1 | 2;
}

function readConfig(config: ChannelConfig): MqttConfig {
  const url = requiredUrl(config, 'url', PROTOCOLS);
  const outboundTopic = requiredString(config, 'outbound_topic');
  if (/[+#]/.test(outboundTopic))
    throw new ChannelConfigError('outbound_topic', 'outbound_topic cannot contain the wildcards + or #');
  return {
    url,
    username: optionalString(config, 'username'),
    password: optionalString(config, 'password'),
    inboundTopic: requiredString(config, 'inbound_topic'),
    outboundTopic,
    qos: (optionalInteger(config, 'qos', 0, 2) ?? 1) as 0 | 1 | 2,
  };
}

/**
 * MQTT: subscribes to `inbound_topic` (wildcards allowed) and publishes replies to
 * `outbound_topic` with `{conversation}` filled in. A persistent session (clean: false, client id
 * from the channel id) keeps QoS 1 messages at the broker while no bridge holds the channel, and a
 * message is acknowledged (PUBACK) only after `deliver` resolved. See docs/channel-kinds.md#mqtt.
 */
export const mqttKind: ChannelKind = {
  kind: 'mqtt',
  fields: ['url', 'username', 'password', 'inbound_topic', 'outbound_topic', 'qos'],
  secretFields: ['password'],
  destinationFields: ['url'],
  check(config) {
    readConfig(config);
  },
  async open(context) {
    const config = readConfig(context.config);
    let address: string;
    try {
      // D9: the broker comes from a channel config; connect to the address that was checked.
      address = await resolveGuardedHost(config.url.hostname, context.allowPrivateTargets);
    } catch (error) {
      context.setStatus({ Error: `MQTT: ${(error as Error).message}` });
      return closedConnection();
    }
    // Loaded by the first MQTT channel, not at boot (docs/performance.md "Memory").
    const { connect } = await import('mqtt');
    const client = connect(clientOptions(context, config, address));
    const closing = new AbortController();
    const ownTopic = outboundTopicPattern(config.outboundTopic);
    client.handleMessage = (packet, done) => {
      // A reply of ours seen again because the inbound filter also matches the outbound topic:
      // acknowledged and dropped, or the agent would answer itself forever.
      if (ownTopic.test(packet.topic)) return done();
      const message = toInbound(packet.topic, Buffer.from(packet.payload));
      // Retried until delivered or closed; the PUBACK waits, so an unacknowledged message stays
      // with the broker for the next session.
      void deliverUntilDone(context, message, closing.signal).then((delivered) => delivered && done());
    };
    watchClient(context, client, config);
    await firstOutcome(client);
    return {
      async send(message: ChannelOutbound) {
        if (closing.signal.aborted) throw new Error('the mqtt channel is closed');
        if (/[+#]/.test(message.conversation)) throw new Error('an MQTT conversation cannot contain + or #');
        // Not queued while offline: the caller learns now, instead of waiting for a reconnect.
        if (!client.connected) throw new Error('the MQTT broker is not connected');
        const topic = config.outboundTopic.replaceAll('{conversation}', message.conversation);
        const payload = JSON.stringify({
          text: message.text,
          in_reply_to: message.in_reply_to,
          conversation: message.conversation,
        });
        await client.publishAsync(topic, payload, { qos: config.qos });
      },
      async close() {
        closing.abort();
        await client.endAsync(true);
      },
    };
  },
};

function clientOptions(context: ChannelContext, config: MqttConfig, address: string): IClientOptions {
  return {
    protocol: config.url.protocol === 'mqtts:' ? 'mqtts' : 'mqtt',
    host: address,
    port: config.url.port === '' ? DEFAULT_PORTS[config.url.protocol] : Number(config.url.port),
    ...(isIP(config.url.hostname.replace(/^\[|\]$/g, '')) === 0 ? { servername: config.url.hostname } : {}),
    clientId: `agent-platform-${context.channelId}`.slice(0, 64),
    clean: false,
    resubscribe: false,
    reconnectPeriod: 2_000,
    connectTimeout: FIRST_CONNECT_TIMEOUT_MS,
    ...(config.username === undefined ? {} : { username: config.username }),
    ...(config.password === undefined ? {} : { password: config.password }),
  };
}

/** Status from the client's events; stops reconnecting when the broker refuses the credentials. */
function watchClient(context: ChannelContext, client: MqttClient, config: MqttConfig): void {
  // After a refusal the client is ended; its later offline/close events must not hide the reason.
  let refused = false;
  client.on('connect', () => {
    client.subscribe(config.inboundTopic, { qos: 1 }, (error) => {
      if (error)
        context.setStatus({ Error: `MQTT subscribe to ${config.inboundTopic} refused: ${error.message}` });
      else context.setStatus('Connected');
    });
  });
  client.on('error', (error: Error & { code?: unknown }) => {
    if (typeof error.code === 'number' && AUTH_REFUSED.has(error.code)) {
      refused = true;
      context.setStatus({ Error: `the MQTT broker refused the credentials (CONNACK ${error.code})` });
      void client.endAsync(true);
    } else if (!refused) context.setStatus({ Error: `MQTT: ${error.message}` });
  });
  client.on('offline', () => {
    if (!refused) context.setStatus({ Error: 'MQTT broker unreachable; reconnecting' });
  });
}

/** Resolves on the first connect, refusal, or failure to reach the broker (status already set). */
function firstOutcome(client: MqttClient): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      client.off('connect', done).off('error', done).off('offline', done).off('end', done);
      resolve();
    };
    client.on('connect', done).on('error', done).on('offline', done).on('end', done);
  });
}

async function deliverUntilDone(
  context: ChannelContext,
  message: InboundMessage,
  closing: AbortSignal,
): Promise<boolean> {
  while (!closing.aborted) {
    try {
      await context.deliver(message);
      return true;
    } catch (error) {
      context.logger.warn(
        { channel_id: context.channelId, reason: (error as Error).message },
        'mqtt message not delivered; retrying',
      );
      await pause(RETRY_DELAY_MS, closing);
    }
  }
  return false;
}

/** Matches the topics `outbound_topic` can produce (`{conversation}` = one or more characters). */
export function outboundTopicPattern(template: string): RegExp {
  const parts = template.split('{conversation}').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('.+')}$`);
}

/**
 * A JSON object with a string `text` gives `{id, text, conversation?, sender?, thread?}`; any
 * other payload is plain text. Without an `id`, the peer id is a hash of topic and payload (the
 * same payload re-published is one message); without a `conversation`, it is the topic.
 */
export function toInbound(topic: string, payload: Buffer): InboundMessage {
  const raw = payload.toString('utf8');
  const parsed = parseObject(raw);
  const structured = parsed !== null && typeof parsed.text === 'string' ? parsed : null;
  const id = structured?.id;
  const peerId =
    typeof id === 'string' && id !== ''
      ? id
      : typeof id === 'number'
        ? String(id)
        : `sha256-${createHash('sha256').update(`${topic}\n${raw}`).digest('hex')}`;
  return {
    peer_message_id: peerId,
    conversation: stringOr(structured?.conversation, topic),
    thread: typeof structured?.thread === 'string' ? structured.thread : null,
    sender: stringOr(structured?.sender, ''),
    text: structured === null ? raw : (structured.text as string),
    meta: { topic },
  };
}

function parseObject(raw: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

function stringOr(value: unknown, fallback: string): string {
  return typeof value === 'string' && value !== '' ? value : fallback;
}

function closedConnection(): ChannelConnection {
  return {
    send: () => Promise.reject(new Error('the mqtt channel could not connect')),
    close: () => Promise.resolve(),
  };
}
