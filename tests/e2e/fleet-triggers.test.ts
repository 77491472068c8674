import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writePackage } from '@agent-platform/domain/testing';
import { requireBinary, waitUntil } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFleet, type Fleet } from '../support/fleet.ts';
import { stoppedAt } from '../support/journal-kit.ts';
import { call } from '../support/platform-process.ts';

// Triggers in a fleet (docs/events.md "Triggers"): 2 api nodes and 2 agent workers over NATS and
// Redis. Events come from invocations on both api nodes, the matching runs on both workers, and
// still `max_fires` holds exactly; after one worker is SIGKILLed the other matches alone; a worker
// SIGKILLed between claiming a fire and invoking leaves a fire recorded lost, not `running`.
const natsBinary = requireBinary('nats-server');
const redisBinary = requireBinary('redis-server');

interface Fire {
  outcome: string;
}

describe.skipIf(natsBinary === null || redisBinary === null)('triggers in a fleet: 2 api nodes, 2 agent workers', () => {
  let fleet: Fleet;
  let packages: string;
  let A: string;
  let B: string;
  let token: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    packages = await mkdtemp(join(tmpdir(), 'ap-fleet-trigger-packages-'));
    fleet = await startFleet({ apis: 2, workers: 2, schedulers: 0, config: { agents: { invocation_timeout_secs: 20 } } });
    [A, B] = fleet.urls as [string, string];
    token = (await call(A, 'POST', '/auth/keys', { body: { name: 'admin', role: 'admin' } })).body.secret;
    // `source` is invoked; `watcher` is what the trigger invokes; `witness` (left Suspended) has an
    // unlimited trigger that records every event it matched, so the test knows when all are in.
    for (const [name, activate] of [['source', true], ['watcher', true], ['witness', false]] as const) {
      const dir = await writePackage(packages, { type: 'agent-template', name: `fleet-${name}`, body: `The ${name}.` });
      const res = await call(name === 'watcher' ? B : A, 'POST', '/catalog/install', { token, body: { path: dir, activate } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      ids[name] = res.body.installed.at(-1).id;
    }
  }, 180_000);

  afterAll(async () => {
    await fleet?.close();
    await rm(packages, { recursive: true, force: true });
  });

  const createTrigger = async (agent: string, body: unknown): Promise<string> => {
    const res = await call(A, 'POST', `/agents/${agent}/triggers`, { token, body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.id;
  };
  const fires = async (id: string): Promise<Fire[]> => (await call(B, 'GET', `/triggers/${id}/fires?limit=500`, { token })).body.fires;
  const triggerOf = async (id: string) =>
    ((await call(B, 'GET', `/agents/${ids.watcher}/triggers`, { token })).body.triggers as Array<{ id: string; fires_count: number }>).find((t) => t.id === id);
  /** Model calls whose last user message starts with `prefix`: the watcher's answers to fires. */
  const modelCalls = (prefix: string): number =>
    fleet.provider.requests.filter((r) => {
      const messages = (r.body?.messages ?? []) as Array<{ role: string; content: string }>;
      return messages.filter((m) => m.role === 'user').at(-1)?.content.startsWith(prefix) === true;
    }).length;

  it('max_fires 3 holds exactly under 50 concurrent invocations across both api nodes', async () => {
    const capped = await createTrigger(ids.watcher!, { pattern: { invocation_completed: { agent_id: ids.source } }, prompt_template: 'Capped: {{event}}', max_fires: 3 });
    const witness = await createTrigger(ids.witness!, { pattern: { invocation_completed: { agent_id: ids.source } } });
    const sends = await Promise.all(
      Array.from({ length: 50 }, (_, i) => call(i % 2 === 0 ? A : B, 'POST', `/agents/${ids.source}/send`, { token, body: { message: `claim ${i}` } })),
    );
    expect(sends.map((r) => r.status)).toEqual(Array(50).fill(200));
    await waitUntil(async () => (await fires(witness)).length === 50, { timeoutMs: 20_000, message: 'all 50 events matched' }).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}\n${fleet.logs()}`);
    });
    await waitUntil(async () => (await fires(capped)).every((f) => f.outcome !== 'running'), { timeoutMs: 20_000, message: 'the fires to settle' });
    expect((await fires(witness)).every((f) => f.outcome === 'skipped_suspended')).toBe(true);
    expect((await fires(capped)).filter((f) => f.outcome === 'fired')).toHaveLength(3);
    expect((await triggerOf(capped))?.fires_count).toBe(3);
    expect(modelCalls('Capped: ')).toBe(3);
  }, 60_000);

  it('after a worker is SIGKILLed, the other matches: a fresh trigger fires once', async () => {
    await fleet.workers[0]!.kill();
    const fresh = await createTrigger(ids.watcher!, { pattern: { invocation_completed: { agent_id: ids.source } }, prompt_template: 'After the kill: {{event}}' });
    expect((await call(B, 'POST', `/agents/${ids.source}/send`, { token, body: { message: 'one more claim' } })).status).toBe(200);
    await waitUntil(async () => (await fires(fresh)).some((f) => f.outcome === 'fired'), { timeoutMs: 45_000, message: 'the fresh trigger to fire' });
    expect(await fires(fresh)).toEqual([expect.objectContaining({ outcome: 'fired' })]);
    expect((await triggerOf(fresh))?.fires_count).toBe(1);
    expect(modelCalls('After the kill: ')).toBe(1);
  }, 60_000);

  it('a worker SIGKILLed between claiming a fire and invoking: another worker records the fire lost, nothing fires twice', async () => {
    // Only this test's trigger matches, and one worker, stopping at the fault point, matches.
    for (const t of (await call(A, 'GET', '/triggers', { token })).body.triggers as Array<{ id: string }>) {
      expect((await call(A, 'DELETE', `/triggers/${t.id}`, { token })).status).toBe(204);
    }
    for (const worker of fleet.workers.splice(0)) await worker.kill();
    const armed = await fleet.add('agent-worker', { AP_FAULT_STOP_AT: 'trigger.before_invoke' });
    fleet.workers.push(armed);
    const lost = await createTrigger(ids.watcher!, { pattern: { invocation_completed: { agent_id: ids.source } }, prompt_template: 'Lost: {{event}}' });
    // Not awaited: the armed worker may stop before its answer leaves.
    const sent = call(A, 'POST', `/agents/${ids.source}/send`, { token, body: { message: 'a claim before the crash' } }).catch(() => null);
    await stoppedAt(() => armed.output(), 'trigger.before_invoke');
    expect(await fires(lost)).toEqual([expect.objectContaining({ outcome: 'running' })]);
    await armed.kill();
    fleet.workers.splice(fleet.workers.indexOf(armed), 1);
    fleet.workers.push(await fleet.add('agent-worker'));
    await waitUntil(async () => (await fires(lost))[0]?.outcome !== 'running', { timeoutMs: 30_000, message: 'the lost fire to be recorded' });
    expect(await fires(lost)).toEqual([expect.objectContaining({ outcome: 'failed', error: expect.stringMatching(/^lost: the worker handling this fire stopped/), finished_at: expect.any(String) })]);
    // Taken from max_fires before the crash; the event (redelivered to the new worker) fires nothing.
    expect((await triggerOf(lost))?.fires_count).toBe(1);
    expect(modelCalls('Lost: ')).toBe(0);
    await sent;
  }, 90_000);
});
