import { Subjects, type AgentInvokeProgress, type AgentInvokeProgressAck, type AgentInvokeRequest } from '@agent-platform/contracts';
import { createEmbeddedBus } from '@agent-platform/bus/embedded';
import type { Bus } from '@agent-platform/bus';
import type { InvocationExecution, InvocationOptions, InvocationRequest, InvocationService } from '@agent-platform/domain';
import { createLogger, type LogBuffer } from '@agent-platform/observability';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createInvocationSlots } from '../invocation-slots.ts';
import { ACK_WINDOW_MS, invokeHandler } from './invoke-handler.ts';

// The worker's ack-window gate (docs/invocation.md "A worker that dies"): heartbeats are requests
// its requester answers with whether it still waits; the invocation is charged (beforeCommit, right
// before the licence commit) and answered only while a heartbeat sent less than ACK_WINDOW_MS ago
// was acknowledged "still waiting". A stand-in invocation service counts the commits.
const PROGRESS = Subjects.agentProgress('requester-1');
let bus: Bus;
let logs: LogBuffer;
let release: () => void;
let held: Promise<void>;

beforeEach(() => {
  bus = createEmbeddedBus();
  held = new Promise((resolve) => (release = resolve));
});
afterEach(async () => {
  release();
  await bus.close();
});

/** The requester's side: `answer` decides each acknowledgement (a never-settling promise: a requester that stopped answering). */
async function requester(answer: (progress: AgentInvokeProgress, n: number) => Promise<AgentInvokeProgressAck>): Promise<AgentInvokeProgress[]> {
  const heard: AgentInvokeProgress[] = [];
  await bus.serve<AgentInvokeProgress, AgentInvokeProgressAck>(PROGRESS, async (p) => (heard.push(p), answer(p, heard.length)));
  return heard;
}

/** A stand-in invocation service: works `workMs`, then commits if `beforeCommit` lets it. */
function service(workMs: number, duplicate = false) {
  const state = { commits: 0 };
  const invocation = {
    async execute(request: InvocationRequest, options: InvocationOptions = {}): Promise<InvocationExecution> {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, workMs);
        options.signal?.addEventListener('abort', () => (clearTimeout(timer), reject(options.signal!.reason as Error)), { once: true });
      });
      const result = { content: 'ok', tokens_used: 1, duration_ms: workMs, correlation_id: request.correlation_id, source: request.source, tool_calls: [], usage: { input_tokens: 1, output_tokens: 1 } };
      if (duplicate) return { result, duplicate: true };
      await options.beforeCommit?.();
      state.commits++;
      return { result, duplicate: false };
    },
  } as unknown as InvocationService;
  return { invocation, state };
}

function handler(invocation: InvocationService) {
  const created = createLogger({ level: 'info', bufferLines: 100, destination: 'silent' });
  logs = created.buffer;
  return invokeHandler({ bus, invocation, logger: created.logger, slots: createInvocationSlots(() => 4) });
}

const REQUEST: AgentInvokeRequest = {
  agent_id: 'a-1',
  source: 'Api',
  message: 'hello',
  correlation_id: 'c-1',
  invocation_id: 'inv-1',
  progress_subject: PROGRESS,
  progress_ack: true,
};

const abandonedLogged = (): boolean => logs.lines().some((l) => /abandoned by its requester/.test(l) && l.includes('"level":40'));

describe('the agent worker charges and answers only while its requester still waits', () => {
  it('a plain send: the first heartbeat goes out as the invocation is taken, its acknowledgement lets the commit through', async () => {
    const heard = await requester(async () => ({ waiting: true }));
    const { invocation, state } = service(20);
    const reply = await handler(invocation)(REQUEST);
    expect(reply.result.content).toBe('ok');
    expect(state.commits).toBe(1);
    expect(heard[0]).toEqual({ invocation_id: 'inv-1', kind: 'accepted' });
  });

  it('a request delivered after its requester gave up (NATS buffered it): refused at its first heartbeat, neither committed nor answered', async () => {
    await requester(async () => ({ waiting: false }));
    const { invocation, state } = service(5_000);
    const started = Date.now();
    await expect(handler(invocation)(REQUEST)).rejects.toThrow(/abandoned by its requester/);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(state.commits).toBe(0);
    expect(abandonedLogged()).toBe(true);
  });

  it('a requester that stops acknowledging (the worker was stalled, or partitioned): past the window, nothing is committed', async () => {
    // Acknowledges the first heartbeat only: later ones are never answered.
    await requester(async (_p, n) => (n === 1 ? { waiting: true } : held.then(() => ({ waiting: true }))));
    const { invocation, state } = service(ACK_WINDOW_MS + 300);
    await expect(handler(invocation)(REQUEST)).rejects.toThrow(/abandoned by its requester/);
    expect(state.commits).toBe(0);
    expect(abandonedLogged()).toBe(true);
  }, 10_000);

  it('a requester that answers every heartbeat keeps a long invocation going', async () => {
    await requester(async () => ({ waiting: true }));
    const { invocation, state } = service(ACK_WINDOW_MS + 1_500);
    await handler(invocation)(REQUEST);
    expect(state.commits).toBe(1);
  }, 10_000);

  it('a duplicate (the key\'s recorded result, nothing to charge) is not answered to a requester that gave up either', async () => {
    await requester(async (_p, n) => (n === 1 ? new Promise((resolve) => setTimeout(() => resolve({ waiting: false }), 50)) : { waiting: false }));
    const { invocation } = service(0, true);
    await expect(handler(invocation)(REQUEST)).rejects.toThrow(/abandoned by its requester/);
  });

  it('a requester of the previous version (no progress_ack): notified heartbeats and no gate, as before', async () => {
    const heard: AgentInvokeProgress[] = [];
    await bus.listen<AgentInvokeProgress>(PROGRESS, (p) => heard.push(p));
    const { invocation, state } = service(20);
    const { progress_ack: _ack, ...old } = REQUEST;
    await handler(invocation)(old);
    expect(state.commits).toBe(1);
    expect(heard[0]).toEqual({ invocation_id: 'inv-1', kind: 'accepted' });
  });
});
