import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventData, Streams, type EventKind, type PlatformEvent } from '@agent-platform/contracts';
import { watchAllEvents, writePackage } from '@agent-platform/domain/testing';
import { waitUntil } from '@agent-platform/testkit';
import { Compile } from 'typebox/compile';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { licenceClaims, startPlatformTestApi, type PlatformTestApi } from '../testing/platform-test-api.ts';

// The event catalogue (docs/events.md) in the all-in-one: real operations over HTTP publish their
// events on `platform.events`, each with the data its schema in contracts describes. A test
// consumer (its own durable, beside the trigger matcher) records what is published. Schedules:
// apps/scheduler/src/service.test.ts; the run's failed and cancelled ends: libs/domain
// run-finalizer events test; channel.message.received: the channel bridge's tests.
interface RawDb {
  prepare(sql: string): { run(): unknown };
  close(): void;
}
const Database = createRequire(import.meta.url)('better-sqlite3') as new (path: string) => RawDb;

let api: PlatformTestApi;
let root: string;
const seen: PlatformEvent[] = [];

beforeAll(async () => {
  api = await startPlatformTestApi({
    licence: licenceClaims({ transaction_budgets: { claims: 1 } }),
    config: { audit: { enabled: true } },
  });
  root = await mkdtemp(join(tmpdir(), 'ap-event-packages-'));
  // Only events something takes are published (docs/events.md): a trigger on every key takes all.
  await watchAllEvents(api.deps.store);
  await api.deps.bus.consume<PlatformEvent>(Streams.platformEvents, { durable: 'test-catalogue', maxDeliver: 1, backoffMs: [0] }, async (e) => void seen.push(e.data));
});
afterAll(async () => {
  await api.close();
  await rm(root, { recursive: true, force: true });
});

const ofKind = (kind: EventKind) => seen.filter((e) => e.kind === kind);
const waitFor = (kind: EventKind, count = 1) => waitUntil(() => ofKind(kind).length >= count, { message: `${count} ${kind} event(s)`, timeoutMs: 10_000 });

describe('every operation publishes its event', () => {
  it('agent lifecycle: installed, upgraded, activated, suspended, uninstalled', async () => {
    const v1 = await writePackage(join(root, 'v1'), { type: 'agent-template', name: 'claims-clerk', version: '1.0.0', body: 'Clerk.' });
    const v2 = await writePackage(join(root, 'v2'), { type: 'agent-template', name: 'claims-clerk', version: '1.1.0', body: 'Clerk, better.' });
    expect((await api.request('POST', '/catalog/install', { body: { path: v1 } })).status).toBe(201);
    expect((await api.request('POST', '/catalog/install', { body: { path: v2, activate: true } })).status).toBe(201);
    const agent = (await api.deps.agents.getByName('claims-clerk'))!;
    expect((await api.request('POST', `/agents/${agent.id}/suspend`)).status).toBe(200);
    expect((await api.request('DELETE', '/catalog/installed/claims-clerk')).status).toBeLessThan(300);
    await waitFor('agent.uninstalled');
    const agentEvents = seen.filter((e) => e.agent_id === agent.id).map((e) => [e.kind, e.data]);
    expect(agentEvents).toEqual([
      ['agent.installed', { name: 'claims-clerk', version: '1.0.0', state: 'Suspended' }],
      ['agent.upgraded', { name: 'claims-clerk', version: '1.1.0', previous_version: '1.0.0', state: 'Running' }],
      ['agent.activated', { name: 'claims-clerk', state: 'Running' }],
      ['agent.suspended', { name: 'claims-clerk', state: 'Suspended' }],
      ['agent.uninstalled', { name: 'claims-clerk', version: '1.1.0' }],
    ]);
  });

  it('invocations, licence budget crossings (80 % and 100 %, once each), workflow runs and audit verification', async () => {
    const agentDir = await writePackage(root, { type: 'agent-template', name: 'claims-adjuster', body: 'Adjust.' });
    const workflowDir = await writePackage(root, { type: 'workflow-template', name: 'claims-flow', agents: ['claims-adjuster'] });
    expect((await api.request('POST', '/catalog/install', { body: { path: agentDir, activate: true } })).status).toBe(201);
    const installed = await api.request('POST', '/catalog/install', { body: { path: workflowDir, activate: true } });
    expect(installed.status).toBe(201);
    const agent = (await api.deps.agents.getByName('claims-adjuster'))!;

    const invoke = (n: number) =>
      api.request('POST', `/agents/${agent.id}/invoke`, { body: { source: 'Api', message: `claim ${n}`, correlation_id: `c-${n}`, workflow_type: 'claims' } });
    expect((await invoke(1)).status).toBe(200);
    // The budget of 1 transaction is used up: the next invocation fails in the licence gate.
    expect((await invoke(2)).status).toBe(403);
    expect((await invoke(3)).status).toBe(403);
    await waitFor('invocation.failed', 2);
    expect(ofKind('invocation.completed').find((e) => e.agent_id === agent.id)?.data).toMatchObject({ correlation_id: 'c-1', source: 'Api', content: 'claim 1' });
    expect(ofKind('invocation.failed')[0]?.data).toMatchObject({ correlation_id: 'c-2', category: 'PermissionDenied' });
    // One crossing each, whatever the calls after it.
    expect(ofKind('licence.budget.warning').map((e) => e.data)).toEqual([expect.objectContaining({ budget: 'transactions:claims', used: 1, limit: 1, pct: 100 })]);
    expect(ofKind('licence.budget.exhausted').map((e) => e.data)).toEqual([expect.objectContaining({ budget: 'transactions:claims', used: 1, limit: 1 })]);

    const workflowId = installed.body.installed.at(-1).id as string;
    const run = await api.request('POST', `/workflows/${workflowId}/run`, { body: { input: 'FNOL 9' } });
    expect(run.status).toBe(201);
    await waitFor('workflow.run.completed');
    const runEvents = seen.filter((e) => e.kind.startsWith('workflow.') && e.data['run_id'] === run.body.id);
    expect(runEvents.map((e) => [e.kind, e.agent_id])).toEqual([
      ['workflow.run.started', null],
      ['workflow.step.completed', agent.id],
      ['workflow.run.completed', null],
    ]);
    expect(runEvents[1]?.data).toMatchObject({ workflow_name: 'claims-flow', step_id: 'step-0', status: 'Completed' });

    const db = new Database(join(api.dataDir, 'data', 'platform.db'));
    db.prepare(`UPDATE l_audit SET body = json_set(body, '$.result', '500') WHERE seq = 2`).run();
    db.close();
    for (let i = 0; i < 2; i++) expect((await api.request('GET', '/security/verify?full=true')).body.valid).toBe(false);
    await waitFor('audit.verification.failed');
    expect(ofKind('audit.verification.failed').map((e) => e.data)).toEqual([{ first_invalid_seq: 2, reason: expect.stringContaining('hash mismatch') }]);
  });

  it('every event published so far matches its kind\'s schema in contracts', () => {
    expect(seen.length).toBeGreaterThan(10);
    for (const event of seen) {
      const check = Compile(EventData[event.kind]);
      expect(check.Check(event.data), `${event.kind}: ${JSON.stringify(event.data)}`).toBe(true);
    }
  });
});
