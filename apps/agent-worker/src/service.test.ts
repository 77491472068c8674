import { QueueGroups, Subjects, type AgentInvokeReply, type AgentStreamToken } from '@agent-platform/contracts';
import { BusError, type Bus } from '@agent-platform/bus';
import { createEmbeddedBus } from '@agent-platform/bus/embedded';
import { Errors, type InvocationExecution, type InvocationRequest, type InvocationService } from '@agent-platform/domain';
import { createLogger } from '@agent-platform/observability';
import { gate, waitUntil } from '@agent-platform/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAgentWorkerService, type AgentWorkerService } from './service.ts';

// The worker over the real embedded bus, with an invocation service scripted per test (the
// invocation rules themselves are tested in libs/domain and end to end in apps/platform).
let bus: Bus;
let workers: AgentWorkerService[] = [];
const { logger } = createLogger({ level: 'silent', bufferLines: 10, destination: 'silent' });

beforeEach(() => {
  bus = createEmbeddedBus();
});
afterEach(async () => {
  for (const w of workers) await w.stop();
  workers = [];
  await bus.close();
});

const outcome = (content: string): InvocationExecution => ({
  result: { content, tokens_used: 2, duration_ms: 1, correlation_id: 'c', source: 'Api', tool_calls: [], usage: { input_tokens: 1, output_tokens: 1 } },
  duplicate: false,
});

async function startWorker(
  invocation: Partial<InvocationService>,
  settings = { worker_concurrency: 64 },
): Promise<AgentWorkerService> {
  const worker = createAgentWorkerService({
    bus,
    logger,
    audit: { record: async () => null },
    settings: () => settings,
    invocation: { execute: async () => outcome(''), abortAgent: () => 0, cancel: () => false, idempotencySettled: () => undefined, takeRateLimit: async () => undefined, ...invocation },
    // Workflow steps are tested in libs/domain and end to end (apps/platform/src/workflows).
    workflows: {
      executor: { handle: async () => null, handOff: async () => undefined, cancelRun: () => 0 },
      sweeper: { start: () => undefined, stop: async () => undefined, sweepOnce: async () => 0, wake: () => undefined },
      stepConcurrency: () => 1,
    },
  });
  await worker.start();
  workers.push(worker);
  return worker;
}

const request = (extra: Record<string, unknown> = {}) => ({ agent_id: 'a1', source: 'Api', message: 'hi', correlation_id: 'c', ...extra });

describe('agent worker', () => {
  it('answers agents.invoke, forwarding streamed text to stream_subject before the reply', async () => {
    const seen: InvocationRequest[] = [];
    await startWorker({
      execute: async (req, options) => {
        seen.push(req);
        for (const piece of ['Hel', 'lo']) options?.onToken?.(piece);
        return outcome('Hello');
      },
    });
    const tokens: string[] = [];
    const sub = await bus.listen<AgentStreamToken>('agents.stream.t1', (m) => tokens.push(m.token));
    const reply = await bus.request<unknown, AgentInvokeReply>(Subjects.agentInvoke, request({ stream_subject: 'agents.stream.t1' }), { timeoutMs: 2_000 });
    expect(reply.result.content).toBe('Hello');
    expect(tokens).toEqual(['Hel', 'lo']);
    expect(seen[0]).not.toHaveProperty('stream_subject');
    await sub.drain();
  });

  it('returns domain errors with their category and details to the caller', async () => {
    await startWorker({ execute: async () => Promise.reject(Errors.rateLimited('slow down', 30, { agent_id: 'a1' })) });
    const error = await bus.request(Subjects.agentInvoke, request(), { timeoutMs: 2_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BusError);
    expect(error).toMatchObject({ code: 'remote', remote: { category: 'RateLimited', message: 'slow down', details: { retry_after_secs: 30 } } });
  });

  it('refuses a request that is not an AgentInvokeRequest', async () => {
    await startWorker({});
    const error = await bus.request(Subjects.agentInvoke, { agent_id: 'a1' }, { timeoutMs: 2_000 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'remote', remote: { category: 'ValidationError' } });
  });

  it('splits invocations across workers of the queue group', async () => {
    const served: string[] = [];
    await startWorker({ execute: async () => (served.push('w1'), outcome('1')) });
    await startWorker({ execute: async () => (served.push('w2'), outcome('2')) });
    for (let i = 0; i < 4; i++) await bus.request(Subjects.agentInvoke, request(), { timeoutMs: 2_000 });
    expect(served.sort()).toEqual(['w1', 'w1', 'w2', 'w2']);
    expect(QueueGroups.agentWorkers).toBe('agent-workers');
  });

  it('aborts the named agent on agents.abort, and stop waits for running invocations', async () => {
    const aborted: Array<[string, string | undefined]> = [];
    const hold = gate();
    const worker = await startWorker({
      abortAgent: (agentId, reason) => (aborted.push([agentId, reason]), 1),
      execute: async () => {
        await hold.promise;
        return outcome('late');
      },
    });
    await bus.notify(Subjects.agentAbort, { agent_id: 'a1' });
    await waitUntil(() => aborted.length === 1, { message: 'the abort' });
    expect(aborted).toEqual([['a1', 'suspended']]);

    const running = bus.request<unknown, AgentInvokeReply>(Subjects.agentInvoke, request(), { timeoutMs: 2_000 });
    let stopped = false;
    const stopping = worker.stop().then(() => (stopped = true));
    await Promise.resolve();
    expect(stopped).toBe(false);
    hold.open();
    expect((await running).result.content).toBe('late');
    await stopping;
    workers = [];
  });

  it('runs at most worker_concurrency invocations at once; the others wait their turn in arrival order', async () => {
    const holds = new Map<string, ReturnType<typeof gate>>();
    const started: string[] = [];
    let running = 0;
    let peak = 0;
    await startWorker(
      {
        execute: async (req, options) => {
          // The invocation service takes its slot once its idempotency key is claimed.
          const release = await options!.acquireSlot!(new AbortController().signal);
          started.push(req.message);
          peak = Math.max(peak, ++running);
          const hold = gate();
          holds.set(req.message, hold);
          await hold.promise;
          running--;
          release();
          return outcome(req.message);
        },
      },
      { worker_concurrency: 2 },
    );
    const replies = ['m1', 'm2', 'm3', 'm4', 'm5'].map((message) =>
      bus.request<unknown, AgentInvokeReply>(Subjects.agentInvoke, request({ message }), { timeoutMs: 5_000 }),
    );
    await waitUntil(() => started.length === 2, { message: 'two invocations to start' });
    await new Promise((r) => setTimeout(r, 50));
    expect(started).toEqual(['m1', 'm2']);
    holds.get('m2')!.open();
    await waitUntil(() => started.length === 3, { message: 'the third to take the freed slot' });
    expect(started[2]).toBe('m3');
    for (const m of ['m1', 'm3']) holds.get(m)!.open();
    await waitUntil(() => started.length === 5, { message: 'the rest to start' });
    for (const m of ['m4', 'm5']) holds.get(m)!.open();
    expect((await Promise.all(replies)).map((r) => r.result.content)).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']);
    expect(peak).toBe(2);
  });

  it('hands execute a slot wait that gives up with the signal, leaving the line', async () => {
    const outcomes: string[] = [];
    const firstHold = gate();
    await startWorker(
      {
        execute: async (req, options) => {
          const controller = new AbortController();
          if (req.message === 'second') setTimeout(() => controller.abort(new Error('gave up waiting')), 50);
          const release = await options!.acquireSlot!(controller.signal).catch((e: unknown) => {
            outcomes.push(`${req.message}: ${(e as Error).message}`);
            throw e;
          });
          if (req.message === 'first') await firstHold.promise;
          outcomes.push(`${req.message}: ran`);
          release();
          return outcome(req.message);
        },
      },
      { worker_concurrency: 1 },
    );
    const first = bus.request<unknown, AgentInvokeReply>(Subjects.agentInvoke, request({ message: 'first' }), { timeoutMs: 5_000 });
    const second = await bus.request(Subjects.agentInvoke, request({ message: 'second' }), { timeoutMs: 5_000 }).catch((e: unknown) => e);
    expect(second).toBeInstanceOf(BusError);
    firstHold.open();
    await first;
    expect((await bus.request<unknown, AgentInvokeReply>(Subjects.agentInvoke, request({ message: 'third' }), { timeoutMs: 5_000 })).result.content).toBe('third');
    expect(outcomes).toEqual(['second: gave up waiting', 'first: ran', 'third: ran']);
  });

  it('refuses a result the bus cannot carry back before it is charged, and says so', async () => {
    const checks: unknown[] = [];
    await startWorker({
      execute: async (_req, options) => {
        const result = outcome('x'.repeat(bus.maxPayloadBytes())).result;
        try {
          options!.checkDeliverable!(result);
        } catch (error) {
          checks.push(error);
          throw error;
        }
        return { result, duplicate: false };
      },
    });
    const error = await bus.request(Subjects.agentInvoke, request(), { timeoutMs: 5_000 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'remote', remote: { category: 'SizeLimitExceeded', message: expect.stringContaining('nothing was charged') } });
    expect(checks).toHaveLength(1);
  });

  it('passes agents.cancel and agents.idempotency.settled on to the invocation service', async () => {
    const cancelled: Array<[string, string | undefined]> = [];
    const settled: string[] = [];
    await startWorker({
      cancel: (id, reason) => (cancelled.push([id, reason]), true),
      idempotencySettled: (id) => void settled.push(id),
    });
    await bus.notify(Subjects.agentCancel, { invocation_id: 'inv-1', reason: 'the client closed the connection' });
    await bus.notify(Subjects.idempotencySettled, { id: 'agent:abc' });
    await waitUntil(() => cancelled.length === 1 && settled.length === 1, { message: 'both notifications' });
    expect(cancelled).toEqual([['inv-1', 'the client closed the connection']]);
    expect(settled).toEqual(['agent:abc']);
  });
});
