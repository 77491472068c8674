import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QueueGroups, Subjects, type AgentInvokeProgress, type AgentInvokeProgressAck, type AgentInvokeReply, type AgentInvokeRequest } from '@agent-platform/contracts';
import type { Bus } from '@agent-platform/bus';
import { createEmbeddedBus } from '@agent-platform/bus/embedded';
import { INVOCATION_FENCES_COLLECTION, invocationFences, type InvocationFenceDoc } from '@agent-platform/domain';
import { createLogger, type LogBuffer } from '@agent-platform/observability';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApiDeps } from '../deps.ts';
import { createAgentInvoker, MAX_REDISPATCHES, type InvocationCall } from './agent-invoker.ts';

// The api's side of a lost worker (docs/invocation.md "A worker that dies"): an embedded bus with
// two fake agent workers in the queue group, the first of which takes the request and goes
// silent; the api presumes it lost after three missed heartbeats and sends the invocation again,
// which the second answers. Each case waits out one detection (3 to 3.5 s).
let dir: string;
let store: Store;
let bus: Bus;
let logs: LogBuffer;
let release: () => void;
let held: Promise<void>;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'invoker-'));
  store = await openEmbeddedStore({ path: join(dir, 's.db') });
  bus = createEmbeddedBus();
  held = new Promise((resolve) => (release = resolve));
});
afterEach(async () => {
  release();
  await bus.close();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

function invoker() {
  const created = createLogger({ level: 'info', bufferLines: 100, destination: 'silent' });
  logs = created.buffer;
  const config = { current: () => ({ agents: { invocation_timeout_secs: 30, max_message_bytes: 65_536 } }) } as unknown as ApiDeps['config'];
  return createAgentInvoker({ bus, store, config, logger: created.logger });
}

const outcome = (request: AgentInvokeRequest, content: string): AgentInvokeReply['result'] => ({
  content,
  tokens_used: 1,
  duration_ms: 1,
  correlation_id: request.correlation_id,
  source: request.source,
  tool_calls: [],
  usage: { input_tokens: 1, output_tokens: 0 },
});

const heartbeat = (request: AgentInvokeRequest, kind: AgentInvokeProgress['kind']) =>
  bus.request<AgentInvokeProgress, AgentInvokeProgressAck>(request.progress_subject!, { invocation_id: request.invocation_id!, kind }, { timeoutMs: 1_000 });

/** Two workers in the queue group: `first` takes the first request (the embedded router goes in turn), `second` the next. */
async function workers(first: (r: AgentInvokeRequest) => Promise<AgentInvokeReply>, second: (r: AgentInvokeRequest) => Promise<AgentInvokeReply>) {
  const seen: AgentInvokeRequest[][] = [[], []];
  await bus.serve<AgentInvokeRequest, AgentInvokeReply>(Subjects.agentInvoke, async (r) => (seen[0]!.push(r), first(r)), { queue: QueueGroups.agentWorkers });
  await bus.serve<AgentInvokeRequest, AgentInvokeReply>(Subjects.agentInvoke, async (r) => (seen[1]!.push(r), second(r)), { queue: QueueGroups.agentWorkers });
  return seen;
}

/** Takes the invocation, says so, then goes silent (a SIGKILL or a SIGSTOP seen from the api). */
const silent = (before: (r: AgentInvokeRequest) => Promise<void> = async () => undefined) => async (r: AgentInvokeRequest): Promise<AgentInvokeReply> => {
  await heartbeat(r, 'accepted');
  await before(r);
  await held;
  return { result: outcome(r, 'from the lost worker'), duplicate: false };
};

const answering = (duplicate = false) => async (r: AgentInvokeRequest): Promise<AgentInvokeReply> => {
  await heartbeat(r, 'accepted');
  return { result: outcome(r, `answered ${r.message}`), duplicate };
};

const CALL: InvocationCall = { agent_id: 'a-1', source: 'Api', message: 'hello', correlation_id: 'corr-1' };

describe('the agent invoker re-dispatches an invocation whose worker is lost', () => {
  it('keyless, nothing state-changing started: fenced off, sent again under a new invocation id, the caller gets the real answer', async () => {
    const seen = await workers(silent(), answering());
    const started = Date.now();
    const reply = await invoker().invoke(CALL);
    expect(reply).toMatchObject({ duplicate: false, result: { content: 'answered hello' } });
    // Detection (3 s of silence, checked every 500 ms) and the second send.
    expect(Date.now() - started).toBeGreaterThanOrEqual(3_000);
    expect(Date.now() - started).toBeLessThan(6_000);
    const [lost, redispatched] = [seen[0]![0]!, seen[1]![0]!];
    expect(redispatched.invocation_id).not.toBe(lost.invocation_id);
    expect(redispatched.progress_ack).toBe(true);
    expect(redispatched.timeout_ms).toBeLessThanOrEqual(30_000 - 3_000);
    const fence = await store.collection<InvocationFenceDoc>(INVOCATION_FENCES_COLLECTION, { ttlField: 'expires_at' }).get(lost.invocation_id!);
    expect(fence?.doc.state).toBe('abandoned');
    const line = logs.lines().map((l) => JSON.parse(l)).find((l) => l.next_invocation_id !== undefined);
    expect(line).toMatchObject({ level: 30, invocation_id: lost.invocation_id, next_invocation_id: redispatched.invocation_id, attempt: 2 });
    // The stalled worker, should it wake: its requester no longer waits for that invocation.
    expect(await heartbeat(lost, 'alive')).toEqual({ waiting: false });
  }, 15_000);

  it('keyless, the lost worker had started a state-changing call: 409 naming the call, never sent again', async () => {
    const fences = invocationFences(store);
    const seen = await workers(
      silent((r) => fences.of(r.invocation_id!).calling({ worker: 'w-1', tool: 'open_claim', idempotency_key: `${r.invocation_id}:0` })),
      answering(),
    );
    const error = await invoker().invoke(CALL).then(() => null, (e: unknown) => e);
    const id = seen[0]![0]!.invocation_id!;
    expect(error).toMatchObject({
      category: 'Conflict',
      details: { reason: 'tool_calls_in_doubt', invocation_id: id, calls: [{ tool: 'open_claim', idempotency_key: `${id}:0`, state: 'unknown' }] },
    });
    expect((error as Error).message).toContain(`${id}:0`);
    expect(seen[1]).toEqual([]);
  }, 15_000);

  it('with an idempotency key: the same request again; a result the lost worker recorded under the key is the caller\'s own answer, not a duplicate', async () => {
    const seen = await workers(silent(), answering(true));
    const reply = await invoker().invoke({ ...CALL, idempotency_key: 'k-1' });
    expect(reply).toMatchObject({ duplicate: false, result: { content: 'answered hello' } });
    expect(seen[1]![0]).toMatchObject({ idempotency_key: 'k-1', message: 'hello' });
    // Fenced off all the same (a transaction it held is given back); the key's journal decides on the next worker.
    expect((await store.collection<InvocationFenceDoc>(INVOCATION_FENCES_COLLECTION).get(seen[0]![0]!.invocation_id!))?.doc.state).toBe('abandoned');
  }, 15_000);

  it('the lost worker had committed its answer (charged) before it fell silent: that answer, not a second run', async () => {
    const fences = invocationFences(store);
    const seen = await workers(
      silent(async (r) => {
        const fence = fences.of(r.invocation_id!);
        await fence.reserved('tx');
        await fence.committing(outcome(r, 'committed by the lost worker'));
      }),
      answering(),
    );
    const reply = await invoker().invoke({ ...CALL, workflow_type: 'claims' });
    expect(reply).toMatchObject({ duplicate: false, result: { content: 'committed by the lost worker' } });
    expect(seen[1]).toEqual([]);
  }, 15_000);

  it('a re-dispatch that finds no worker running waits for one; the wait is not counted as silence', async () => {
    const lostOne = await bus.serve<AgentInvokeRequest, AgentInvokeReply>(Subjects.agentInvoke, silent(), { queue: QueueGroups.agentWorkers });
    const started = Date.now();
    const answered = invoker().invoke(CALL);
    // The only worker goes away (its subscription with it); another starts 19 s after the send, past
    // what MAX_REDISPATCHES more watched sends of 3 s each would have allowed.
    setTimeout(() => void lostOne.drain(), 500);
    const lateMs = (MAX_REDISPATCHES + 1) * 3_000 + 1_000;
    setTimeout(() => void bus.serve<AgentInvokeRequest, AgentInvokeReply>(Subjects.agentInvoke, answering(), { queue: QueueGroups.agentWorkers }), lateMs);
    expect(await answered).toMatchObject({ result: { content: 'answered hello' } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(lateMs);
  }, 40_000);

  it(`at most MAX_REDISPATCHES (${MAX_REDISPATCHES}) re-dispatches: the last lost worker is answered worker_lost`, async () => {
    await bus.serve<AgentInvokeRequest, AgentInvokeReply>(Subjects.agentInvoke, silent(), { queue: QueueGroups.agentWorkers });
    const error = await invoker().invoke({ ...CALL, idempotency_key: 'k-2' }).then(() => null, (e: unknown) => e);
    expect(error).toMatchObject({ category: 'Internal', details: { reason: 'worker_lost' } });
  }, 40_000);

  it('a worker of the previous version (heartbeats notified, not requested) is still a live worker', async () => {
    await bus.serve<AgentInvokeRequest, AgentInvokeReply>(
      Subjects.agentInvoke,
      async (r) => {
        const timer = setInterval(() => void bus.notify<AgentInvokeProgress>(r.progress_subject!, { invocation_id: r.invocation_id!, kind: 'alive' }), 1_000);
        await new Promise((resolve) => setTimeout(resolve, 4_500));
        clearInterval(timer);
        return { result: outcome(r, 'slow but alive'), duplicate: false };
      },
      { queue: QueueGroups.agentWorkers },
    );
    expect(await invoker().invoke(CALL)).toMatchObject({ result: { content: 'slow but alive' } });
  }, 15_000);
});
