import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { Envelope } from '@agent-platform/contracts';
import { busConformance, expectBusError, gate, requireBinary, startNatsServer, waitUntil, type NatsServerHandle } from '@agent-platform/testkit';
import type { Bus } from '../bus.ts';
import { connectNatsBus } from './nats-bus.ts';
import { jetStreamName, streamNames } from './nats-names.ts';

const natsServer = requireBinary('nats-server');

function envelope<T>(data: T, id: string = randomUUID()): Envelope<T> {
  return { id, correlation_id: 'c', attempt: 1, occurred_at: new Date().toISOString(), data };
}

function unique(name: string): string {
  return `${name}.${randomUUID().slice(0, 8)}`;
}

/** Gates a test holds handlers on; afterEach opens them so a failed test cannot hang close(). */
const gates: { open: () => void }[] = [];
function held(): ReturnType<typeof gate> {
  const g = gate();
  gates.push(g);
  return g;
}
function openGates(): void {
  for (const g of gates.splice(0)) g.open();
}

describe.skipIf(natsServer === null)('NatsBus', () => {
  let server: NatsServerHandle;
  beforeAll(async () => {
    server = await startNatsServer();
  });
  afterAll(async () => {
    await server?.dispose();
  });

  busConformance('nats', async () => ({
    bus: await connectNatsBus({ servers: server.url, name: 'conformance-a' }),
    second: () => connectNatsBus({ servers: server.url, name: 'conformance-b' }),
    cleanup: async () => undefined,
  }));

  describe('on a shared server', () => {
    const opened: Bus[] = [];
    const open = async (options: { dedupWindowMs?: number } = {}): Promise<Bus> => {
      const bus = await connectNatsBus({ servers: server.url, ...options });
      opened.push(bus);
      return bus;
    };
    afterEach(async () => {
      openGates();
      for (const bus of opened.splice(0)) await bus.close();
    });

    it('answers no_responders well under half a second', async () => {
      const bus = await open();
      const started = Date.now();
      await expectBusError(bus.request(unique('nobody'), {}, { timeoutMs: 5_000 }), 'no_responders');
      expect(Date.now() - started).toBeLessThan(500);
    });

    it('runs up to `concurrency` handlers of one consumer at once, never more', async () => {
      const bus = await open();
      const stream = unique('par');
      const hold = held();
      let running = 0;
      let peak = 0;
      await bus.consume(stream, { durable: 'd', maxDeliver: 1, backoffMs: [], concurrency: 3 }, async () => {
        running += 1;
        peak = Math.max(peak, running);
        await hold.promise;
        running -= 1;
      });
      for (let i = 0; i < 6; i++) await bus.publish(stream, envelope({ i }));
      await waitUntil(() => running === 3, { message: 'three handlers running' });
      hold.open();
      await waitUntil(() => running === 0 && peak === 3, { message: 'all handlers done' });
      expect(peak).toBe(3);
    });

    it('keeps a handler that outlives ackWaitMs alive instead of redelivering its message', async () => {
      const bus = await open();
      const stream = unique('slow');
      const hold = held();
      const attempts: number[] = [];
      // ackWaitMs 1 s, renewed every third of it: a loaded machine (the clean-clone CI run) stalled
      // the event loop past a 200 ms ack wait once, and the server rightly redelivered.
      const seen: Array<[string, number]> = [];
      await bus.consume(stream, { durable: 'd', maxDeliver: 3, backoffMs: [0], ackWaitMs: 1_000, concurrency: 2 }, async (e) => {
        attempts.push(e.attempt);
        seen.push([e.id, e.attempt]);
        if (e.id === 'slow') await hold.promise;
      });
      await bus.publish(stream, envelope({}, 'slow'));
      await waitUntil(() => attempts.length === 1, { message: 'the first delivery' });
      // Three ack waits pass with the handler still running: no redelivery may come.
      await expect(waitUntil(() => attempts.length > 1, { timeoutMs: 3_000 })).rejects.toThrow(/timed out/);
      hold.open();
      await bus.publish(stream, envelope({}, 'marker'));
      await waitUntil(() => seen.some(([id]) => id === 'marker'), { message: 'the marker' });
      expect(seen).toEqual([
        ['slow', 1],
        ['marker', 1],
      ]);
    });

    it('dead-letters a message whose consumer died holding its last delivery', async () => {
      const bus = await open();
      const stream = unique('crash');
      const options = { durable: 'd', maxDeliver: 1, backoffMs: [], ackWaitMs: 300 };
      // Create the durable, then let a "worker" that will crash take the message.
      await (await bus.consume(stream, options, async () => undefined)).drain();
      await bus.publish(stream, envelope({ n: 1 }, 'orphan'));
      const crashed: NatsConnection = await connect({ servers: server.url });
      try {
        const names = streamNames('AP', stream);
        const taken = await (await jetstream(crashed).consumers.get(names.stream, jetStreamName('d'))).next({ expires: 2_000 });
        expect(taken?.info.deliveryCount).toBe(1);
      } finally {
        await crashed.close();
      }

      const handled: string[] = [];
      const dead: { envelope: Envelope<unknown>; error: unknown }[] = [];
      await bus.consume(stream, { ...options, onDeadLetter: (e, error) => dead.push({ envelope: e, error }) }, async (e) => {
        handled.push(e.id);
      });
      await waitUntil(() => dead.length === 1, { message: 'the dead letter from the advisory' });
      expect(dead[0]!.envelope).toMatchObject({ id: 'orphan', data: { n: 1 }, attempt: 1 });
      expect(String(dead[0]!.error)).toContain('never settled');
      expect(handled).toEqual([]);
    });

    it('creates a stream and its durable again when an operator deleted them', async () => {
      const bus = await open();
      const stream = unique('gone');
      const got: string[] = [];
      await bus.consume(stream, { durable: 'd', maxDeliver: 3, backoffMs: [0] }, async (e) => {
        got.push(e.id);
      });
      await bus.publish(stream, envelope({}, 'before'));
      await waitUntil(() => got.includes('before'), { message: 'the first message' });
      const admin = await connect({ servers: server.url });
      await (await jetstreamManager(admin)).streams.delete(streamNames('AP', stream).stream);
      await admin.close();

      expect(await bus.publish(stream, envelope({}, 'after'))).toEqual({ duplicate: false });
      await waitUntil(() => got.includes('after'), { timeoutMs: 10_000, message: 'the message after the deletion' });
      expect(got).toEqual(['before', 'after']);
    });

    it('accepts an id again once the dedup window has passed', async () => {
      const bus = await open({ dedupWindowMs: 300 });
      const stream = unique('window');
      expect(await bus.publish(stream, envelope({}, 'x'))).toEqual({ duplicate: false });
      expect(await bus.publish(stream, envelope({}, 'x'))).toEqual({ duplicate: true });
      await waitUntil(async () => !(await bus.publish(stream, envelope({}, 'x'))).duplicate, {
        timeoutMs: 5_000,
        intervalMs: 100,
        message: 'the window to pass',
      });
    });
  });

  describe('across a server restart', () => {
    let own: NatsServerHandle | undefined;
    const opened: Bus[] = [];
    afterEach(async () => {
      openGates();
      for (const bus of opened.splice(0)) await bus.close();
      await own?.dispose();
      own = undefined;
    });
    const open = async (s: NatsServerHandle): Promise<Bus> => {
      const bus = await connectNatsBus({ servers: s.url });
      opened.push(bus);
      return bus;
    };

    it('handles every message of a burst across a server crash and restart, nothing lost', async () => {
      own = await startNatsServer();
      const publisher = await open(own);
      const consumer = await open(own);
      const processed = new Set<string>();
      const hold = held();
      let deliveries = 0;
      let running = 0;
      // Idempotent on envelope.id, as every stream handler must be. From m50 on, the first
      // deliveries wait until the server is gone, so the crash catches handlers mid-flight.
      await consumer.consume('burst', { durable: 'workers', maxDeliver: 20, backoffMs: [50], concurrency: 8 }, async (e) => {
        deliveries += 1;
        running += 1;
        if (Number(e.id.slice(1)) >= 50) await hold.promise;
        running -= 1;
        processed.add(e.id);
      });
      const ids = Array.from({ length: 200 }, (_, i) => `m${i}`);
      const publishBatches = async (from: number, to: number): Promise<void> => {
        for (let i = from; i < to; i += 10) {
          await Promise.all(ids.slice(i, i + 10).map((id) => publisher.publish('burst', envelope({ id }, id))));
        }
      };
      await publishBatches(0, 100);
      await waitUntil(() => processed.size === 50 && running === 8, { message: '50 handled and 8 in flight' });

      await own.kill();
      // Published while the server is down: the client buffers, publish retries after reconnect.
      const publishing = publishBatches(100, 200);
      hold.open();
      await own.restart();
      await publishing;

      await waitUntil(() => processed.size === 200, { timeoutMs: 20_000, message: '200 distinct ids' });
      expect([...processed].sort()).toEqual([...ids].sort());
      expect(deliveries).toBeGreaterThanOrEqual(200);
    });

    it('serves requests again within a few seconds of a restart, and reports health meanwhile', async () => {
      own = await startNatsServer({ jetstream: false });
      const client = await open(own);
      const server = await open(own);
      await server.serve<{ n: number }, number>('double', async ({ n }) => n * 2);
      expect(await client.request('double', { n: 2 }, { timeoutMs: 1_000 })).toBe(4);

      await own.stop();
      await waitUntil(async () => (await client.health()).status === 'down', { message: 'health down' });
      await own.restart();
      const back = Date.now();
      await waitUntil(
        async () => client.request('double', { n: 3 }, { timeoutMs: 300 }).then((r) => r === 6, () => false),
        { timeoutMs: 5_000, intervalMs: 50, message: 'a reply after the restart' },
      );
      expect(Date.now() - back).toBeLessThan(5_000);
      expect((await client.health()).status).toBe('ok');
    });

    it('answers a request sent while the server is down once it is back, instead of losing it', async () => {
      // nats.js discards what was published while disconnected at each reconnection attempt: the
      // request must wait for the connection, or its caller waits for nothing until the timeout.
      own = await startNatsServer({ jetstream: false });
      const client = await open(own);
      const server = await open(own);
      await server.serve<{ n: number }, number>('double', async ({ n }) => n * 2);
      await own.kill();
      await waitUntil(async () => (await client.health()).status === 'down', { message: 'health down' });
      const sent = Date.now();
      const during = client.request('double', { n: 5 }, { timeoutMs: 8_000 });
      await own.restart();
      expect(await during).toBe(10);
      expect(Date.now() - sent).toBeLessThan(5_000);
    });

    it('fails a request with timeout when the server stays down for all of its time budget', async () => {
      own = await startNatsServer({ jetstream: false });
      const client = await open(own);
      await own.kill();
      await waitUntil(async () => (await client.health()).status === 'down', { message: 'health down' });
      await expectBusError(client.request('double', { n: 1 }, { timeoutMs: 300 }), 'timeout');
    });
  });
});
