import { Subjects, type AgentInvokeProgress, type AgentInvokeProgressAck, type AgentInvokeRequest } from '@agent-platform/contracts';
import { createEmbeddedBus } from '@agent-platform/bus/embedded';
import type { Bus } from '@agent-platform/bus';
import { Errors, type AuditRecordInput, type InvocationExecution, type InvocationOptions, type InvocationRequest, type InvocationService } from '@agent-platform/domain';
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
/** What the handler appended to its audit trail; `failAppends`: the trail refuses them. */
let appended: AuditRecordInput[];
let failAppends: boolean;

beforeEach(() => {
  bus = createEmbeddedBus();
  held = new Promise((resolve) => (release = resolve));
  appended = [];
  failAppends = false;
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
      await options.onAnswered?.(result).catch(() => undefined);
      return { result, duplicate: false };
    },
  } as unknown as InvocationService;
  return { invocation, state };
}

function handler(invocation: InvocationService) {
  const created = createLogger({ level: 'info', bufferLines: 100, destination: 'silent' });
  logs = created.buffer;
  const audit = {
    record: async (entry: AuditRecordInput) => {
      if (failAppends) throw new Error('disk full');
      appended.push(entry);
      return null;
    },
  };
  return invokeHandler({ bus, invocation, audit, logger: created.logger, slots: createInvocationSlots(() => 4) });
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

describe('the requesting HTTP request\'s audit entry (audit_entry)', () => {
  const ENTRY = {
    category: 'request' as const,
    identity: 'ops-key',
    role: 'service',
    action: 'POST /agents/:id/send',
    target: '/agents/a-1/send',
    result: '200',
    metadata: { request_id: 'req-1' },
  };
  const plain = { ...REQUEST, progress_subject: undefined, progress_ack: undefined };

  it('is appended with a fresh answer, and the reply says so: the api writes nothing', async () => {
    const reply = await handler(service(0).invocation)({ ...plain, audit_entry: ENTRY });
    expect(appended).toEqual([ENTRY]);
    expect(reply.audited).toBe(true);
  });

  it('is left to the api for a duplicate (its request gets an entry of its own there)', async () => {
    const reply = await handler(service(0, true).invocation)({ ...plain, audit_entry: ENTRY });
    expect(appended).toEqual([]);
    expect(reply.audited).toBeUndefined();
  });

  it('is left to the api when the append fails: the answer still goes out, not marked audited', async () => {
    failAppends = true;
    const reply = await handler(service(0).invocation)({ ...plain, audit_entry: ENTRY });
    expect(reply.result.content).toBe('ok');
    expect(reply.audited).toBeUndefined();
  });

  it('without one (a requester of the previous version, a trigger), nothing is appended', async () => {
    const reply = await handler(service(0).invocation)(plain);
    expect(appended).toEqual([]);
    expect(reply.audited).toBeUndefined();
  });
});

describe('an invocation that fails', () => {
  const plain = { ...REQUEST, progress_subject: undefined, progress_ack: undefined };
  const failing = (error: Error) => ({ execute: async () => Promise.reject(error) }) as unknown as InvocationService;

  it('with an internal error is logged here with its ids: its requester only hears "internal error"', async () => {
    const invoke = handler(failing(new Error('connection lost')));
    await expect(invoke(plain)).rejects.toThrow('connection lost');
    const line = logs.lines().find((l) => l.includes('an invocation failed with an internal error'));
    expect(line).toBeDefined();
    expect(JSON.parse(line!)).toMatchObject({ level: 50, invocation_id: 'inv-1', correlation_id: 'c-1', agent_id: 'a-1', err: { message: 'connection lost' } });
  });

  it('with a platform error (its category reaches the requester) is not logged as internal', async () => {
    const invoke = handler(failing(Errors.notFound('agent', 'a-1')));
    await expect(invoke(plain)).rejects.toThrow();
    expect(logs.lines().some((l) => l.includes('internal error'))).toBe(false);
  });
});
