import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardedFetch } from '@agent-platform/net';
import { createLogger } from '@agent-platform/observability';
import { requireBinary, waitUntil } from '@agent-platform/testkit';
import type { ChannelConfig, ChannelContext, ChannelStatus, InboundMessage } from '../channel-kind.ts';
import {
  channelKindConformance,
  connectMqttTestClient,
  startMosquitto,
  type MosquittoHandle,
  type MqttTestClient,
} from '../testing/index.ts';
import { mqttKind, toInbound } from './mqtt-kind.ts';

const mosquitto = requireBinary('mosquitto');
const USER = 'bridge';
const PASSWORD = randomUUID();

describe.skipIf(mosquitto === null)('mqtt against mosquitto', () => {
  channelKindConformance(mqttKind, async () => {
    const broker = await startMosquitto({ users: { [USER]: PASSWORD, device: 'device-pass' } });
    const device = await connectMqttTestClient(broker.url, { username: 'device', password: 'device-pass' });
    await device.subscribe('fleet/+/out');
    const config = {
      url: broker.url,
      username: USER,
      password: PASSWORD,
      inbound_topic: 'fleet/+/in',
      outbound_topic: 'fleet/{conversation}/out',
    };
    let seq = 0;
    return {
      goodConfig: config,
      badCredentialsConfig: { ...config, password: 'wrong' },
      badCredentialsError: /broker refused the credentials \(CONNACK (4|5|134|135)\)/,
      badConfigs: [
        { why: 'no url', config: { ...config, url: undefined }, field: 'url' },
        { why: 'url not mqtt', config: { ...config, url: 'http://127.0.0.1:1883' }, field: 'url' },
        { why: 'no inbound topic', config: { ...config, inbound_topic: '' }, field: 'inbound_topic' },
        {
          why: 'wildcard in outbound topic',
          config: { ...config, outbound_topic: 'fleet/#' },
          field: 'outbound_topic',
        },
        { why: 'qos 3', config: { ...config, qos: 3 }, field: 'qos' },
        { why: 'password not a string', config: { ...config, password: 12 }, field: 'password' },
      ],
      async sendInbound(text) {
        seq += 1;
        const truck = `truck${seq}`;
        const payload = { id: randomUUID(), text, conversation: truck, sender: `driver-${seq}` };
        await device.publish(`fleet/${truck}/in`, payload);
        return {
          conversation: truck,
          text,
          thread: null,
          resend: () => device.publish(`fleet/${truck}/in`, payload),
        };
      },
      received: () =>
        device.received.map((m) => {
          const body = JSON.parse(m.payload) as { text: string; conversation: string };
          expect(m.topic).toBe(`fleet/${body.conversation}/out`);
          return { conversation: body.conversation, thread: null, text: body.text };
        }),
      async close() {
        await device.close();
        await broker.dispose();
      },
    };
  });

  describe('mqtt specifics', () => {
    let broker: MosquittoHandle;
    let device: MqttTestClient;
    beforeAll(async () => {
      broker = await startMosquitto();
      device = await connectMqttTestClient(broker.url);
    });
    afterAll(async () => {
      await device?.close();
      await broker?.dispose();
    });

    function context(config: ChannelConfig, allowPrivateTargets = true) {
      const delivered: InboundMessage[] = [];
      const statuses: ChannelStatus[] = [];
      const ctx: ChannelContext = {
        channelId: `mqtt-${randomUUID()}`,
        config,
        deliver: async (m) => void delivered.push(m),
        setStatus: (s) => statuses.push(s),
        fetch: guardedFetch(() => allowPrivateTargets),
        allowPrivateTargets,
        logger: createLogger({ level: 'silent', bufferLines: 1, destination: 'silent' }).logger,
      };
      return { ctx, delivered, statuses };
    }

    it('plain-text payloads: conversation = topic, peer id = hash of topic and payload', async () => {
      const run = context({
        url: broker.url,
        inbound_topic: 'plain/#',
        outbound_topic: 'replies/{conversation}',
      });
      const connection = await mqttKind.open(run.ctx);
      try {
        await waitUntil(() => run.statuses.at(-1) === 'Connected');
        await device.publish('plain/dock/7', 'door open');
        await device.publish('plain/dock/7', 'door open');
        await waitUntil(() => run.delivered.length === 2);
        expect(run.delivered[0]).toMatchObject({
          conversation: 'plain/dock/7',
          text: 'door open',
          thread: null,
          meta: { topic: 'plain/dock/7' },
        });
        expect(run.delivered[1]?.peer_message_id).toBe(run.delivered[0]?.peer_message_id);
      } finally {
        await connection.close();
      }
    });

    it('does not deliver its own replies when the inbound filter also matches the outbound topic', async () => {
      const run = context({
        url: broker.url,
        inbound_topic: 'loop/#',
        outbound_topic: 'loop/{conversation}/out',
      });
      const connection = await mqttKind.open(run.ctx);
      try {
        await waitUntil(() => run.statuses.at(-1) === 'Connected');
        await connection.send({
          channel_id: 'c',
          conversation: 'truck9',
          thread: null,
          text: 'our reply',
          in_reply_to: null,
          meta: {},
        });
        await device.publish('loop/truck9/in', { id: 'm-1', text: 'a device message' });
        await waitUntil(() => run.delivered.length >= 1);
        expect(run.delivered.map((m) => m.text)).toEqual(['a device message']);
      } finally {
        await connection.close();
      }
    });

    it('JSON without conversation uses the topic; numbers as ids are kept', () => {
      expect(toInbound('t/1', Buffer.from(JSON.stringify({ id: 7, text: 'hi' })))).toMatchObject({
        peer_message_id: '7',
        conversation: 't/1',
        sender: '',
        text: 'hi',
      });
      expect(toInbound('t/1', Buffer.from('{"no":"text"}'))?.text).toBe('{"no":"text"}');
    });

    it('refuses a broker on a private address unless private targets are allowed (D9)', async () => {
      const run = context({ url: broker.url, inbound_topic: 'a', outbound_topic: 'b' }, false);
      const connection = await mqttKind.open(run.ctx);
      await connection.close();
      expect(run.statuses).toHaveLength(1);
      expect((run.statuses[0] as { Error: string }).Error).toMatch(/allow_private_targets/);
    });

    it('reports {Error} when the broker is unreachable', async () => {
      const run = context({ url: 'mqtt://127.0.0.1:1', inbound_topic: 'a', outbound_topic: 'b' });
      const connection = await mqttKind.open(run.ctx);
      await connection.close();
      expect(typeof run.statuses.at(-1)).toBe('object');
    });
  });
});
