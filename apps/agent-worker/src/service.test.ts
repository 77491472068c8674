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
  settings = { worker_concurrency: 64, invocation_timeout_secs: 30 },
): Promise<AgentWorkerService> {
  const worker = createAgentWorkerService({
    bus,
    logger,
    settings: () => settings,
    invocation: { execute: async () => outcome(''), abortAgent: () => 0, ...invocation },
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
        execute: async (req) => {
          started.push(req.message);
          peak = Math.max(peak, ++running);
          const hold = gate();
          holds.set(req.message, hold);
          await hold.promise;
          running--;
          return outcome(req.message);
        },
      },
      { worker_concurrency: 2, invocation_timeout_secs: 30 },
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

  it('answers Timeout to an invocation that waited out invocation_timeout_secs in line, and never runs it', async () => {
    const hold = gate();
    const started: string[] = [];
    await startWorker(
      {
        execute: async (req) => {
          started.push(req.message);
          await hold.promise;
          return outcome(req.message);
        },
      },
      { worker_concurrency: 1, invocation_timeout_secs: 1 },
    );
    const first = bus.request<unknown, AgentInvokeReply>(Subjects.agentInvoke, request({ message: 'long' }), { timeoutMs: 5_000 });
    await waitUntil(() => started.length === 1, { message: 'the first invocation to start' });
    const waited = await bus.request(Subjects.agentInvoke, request({ message: 'queued' }), { timeoutMs: 5_000 }).catch((e: unknown) => e);
    expect(waited).toMatchObject({ code: 'remote', remote: { category: 'Timeout' } });
    expect((waited as BusError).remote?.message).toMatch(/waiting for a free slot.*worker_concurrency/);
    hold.open();
    expect((await first).result.content).toBe('long');
    await new Promise((r) => setTimeout(r, 50));
    expect(started).toEqual(['long']);
  });

  it('passes the time left to an invocation that waited: it is aborted when the deadline from its arrival passes', async () => {
    const firstHold = gate();
    const signals: Array<AbortSignal | undefined> = [];
    await startWorker(
      {
        execute: async (req, options) => {
          signals.push(options?.signal);
          if (req.message === 'first') {
            await firstHold.promise;
            return outcome('first');
          }
          // The second one runs until its signal says stop, as a model call would.
          await new Promise((_, reject) => options?.signal?.addEventListener('abort', () => reject(options.signal?.reason as Error)));
          return outcome('never');
        },
      },
      { worker_concurrency: 1, invocation_timeout_secs: 1 },
    );
    const first = bus.request<unknown, AgentInvokeReply>(Subjects.agentInvoke, request({ message: 'first' }), { timeoutMs: 5_000 });
    await waitUntil(() => signals.length === 1, { message: 'the first invocation to start' });
    const second = bus.request(Subjects.agentInvoke, request({ message: 'second' }), { timeoutMs: 5_000 }).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 400));
    firstHold.open();
    await first;
    const startedAt = Date.now();
    expect(await second).toMatchObject({ code: 'remote', remote: { category: 'Timeout' } });
    expect(Date.now() - startedAt).toBeLessThan(900);
    expect(signals[0]).toBeUndefined();
    expect(signals[1]).toBeInstanceOf(AbortSignal);
  });
});
