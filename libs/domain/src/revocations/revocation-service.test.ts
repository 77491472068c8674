import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Subjects, type AgentAbortMessage, type EventKind, type Revocation } from '@agent-platform/contracts';
import type { Bus } from '@agent-platform/bus';
import { createEmbeddedBus } from '@agent-platform/bus/embedded';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { createAgentLifecycle, type AgentLifecycle } from '../agents/agent-lifecycle.ts';
import { createAgentStore, type AgentStore } from '../agents/agent-store.ts';
import { createSessionStore } from '../agents/create-session-store.ts';
import { createAuditTrail } from '../audit/audit-trail.ts';
import type { AuditTrail } from '../audit/audit-entry.ts';
import { createCatalogService, type CatalogService } from '../catalog/catalog-service.ts';
import { directoryPackageSource } from '../catalog/package-source.ts';
import { writePackage, type PackageSpec } from '../catalog/package-writer.fixture.ts';
import type { EventPublisher } from '../events/event-publisher.ts';
import { createMemoryStore } from '../memory/memory-store.ts';
import { fixedClock } from '../time/clock.ts';
import { admissionOf } from '../workflows/workflow-admissions.ts';
import { createRevocationService, type RevocationService } from './revocation-service.ts';

const KEY = 'sha256:0123456789abcdef0123456789abcdef';
const OPERATOR = { identity: 'ops-lead', role: 'operator' } as const;

let dir: string;
let store: Store;
let bus: Bus;
let agents: AgentStore;
let catalog: CatalogService;
let lifecycle: AgentLifecycle;
let audit: AuditTrail;
let revocations: RevocationService;
let clock: ReturnType<typeof fixedClock>;
let emitted: Array<{ kind: EventKind; agent_id: string | null; data: unknown; id?: string }>;
let aborts: AgentAbortMessage[];

const events: EventPublisher = {
  emit: async (kind, input) => void emitted.push({ kind, ...input }),
};

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-revocations-'));
  clock = fixedClock('2030-01-01T00:00:00.000Z');
  store = await openEmbeddedStore({ path: join(dir, 'platform.db') });
  bus = createEmbeddedBus();
  agents = createAgentStore(store);
  emitted = [];
  aborts = [];
  await bus.listen<AgentAbortMessage>(Subjects.agentAbort, (m) => void aborts.push(m));
  catalog = createCatalogService({
    store,
    agents,
    sessions: createSessionStore(store, clock),
    memory: createMemoryStore(store, agents, clock),
    clock,
    source: directoryPackageSource('0.1.0'),
  });
  lifecycle = createAgentLifecycle({ store, agents, bus, clock, events });
  audit = createAuditTrail({ store, clock, enabled: true });
  revocations = createRevocationService({ store, agents, lifecycle, clock, audit, events });
});

afterEach(async () => {
  await bus.close();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const write = (spec: PackageSpec) => writePackage(join(dir, 'pkgs'), spec);
const revocation = (name: string, version: string, seq: number): Revocation => ({ seq, name, version, reason: `${name} ${version} exfiltrates claims`, revoked_at: '2029-12-31T23:00:00.000Z' });
const state = async (name: string) => (await agents.getByName(name))?.state;
const revokedEvents = () => emitted.filter((e) => e.kind === 'package.revoked');
const revokedAudit = async () => (await audit.query({ limit: 100, category: 'agents' })).filter((e) => e.action === 'package.revoked');

/** loss-summary (skill) <- fnol-triage (competency) <- claims-intake (agent); claims-helper equips fnol-triage without declaring it; policy-servicing needs nothing. */
async function installFleet(): Promise<void> {
  await write({ type: 'skill', name: 'loss-summary' });
  await write({ type: 'competency', name: 'fnol-triage', skills: ['loss-summary'], dependencies: { 'loss-summary': '^1.0.0' } });
  await catalog.install({ path: await write({ type: 'agent-template', name: 'claims-intake', competencies: ['fnol-triage'], dependencies: { 'fnol-triage': '^1.0.0' } }), activate: true });
  await catalog.install({ path: await write({ type: 'agent-template', name: 'claims-helper', competencies: ['fnol-triage'] }), activate: true });
  await catalog.install({ path: await write({ type: 'agent-template', name: 'policy-servicing' }), activate: true });
}

describe('applying a revocation', () => {
  it('suspends the agent of a revoked agent template, marks the package revoked, audits and emits once', async () => {
    await installFleet();
    const agent = (await agents.getByName('policy-servicing'))!;
    const outcome = await revocations.apply(revocation('policy-servicing', '1.0.0', 7), KEY);
    expect(outcome).toEqual({ status: 'applied', installed: true, agents_suspended: [agent.id], workflows_drained: [] });
    expect(await state('policy-servicing')).toBe('Suspended');
    expect(await state('claims-intake')).toBe('Running');
    // The suspend path of POST /agents/{id}/suspend: in-flight work aborted over the bus, agent.suspended emitted.
    expect(aborts).toEqual([{ agent_id: agent.id, reason: 'suspended' }]);
    expect(emitted.filter((e) => e.kind === 'agent.suspended').map((e) => e.agent_id)).toEqual([agent.id]);

    const listed = (await catalog.installed()).find((p) => p.name === 'policy-servicing');
    expect(listed).toMatchObject({
      revoked: true,
      revocation: { version: '1.0.0', reason: 'policy-servicing 1.0.0 exfiltrates claims', revoked_at: '2029-12-31T23:00:00.000Z', seq: 7, override: null },
    });
    expect((await catalog.installed()).find((p) => p.name === 'claims-intake')).toMatchObject({ revoked: false, revocation: null });

    // Applied again (a redelivered push, the next poll): nothing more.
    expect(await revocations.apply(revocation('policy-servicing', '1.0.0', 7), KEY)).toEqual({ status: 'already-applied' });
    const entries = await revokedAudit();
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      identity: `registry:${KEY}`,
      target: 'policy-servicing@1.0.0',
      result: 'applied',
      metadata: { seq: 7, reason: 'policy-servicing 1.0.0 exfiltrates claims', agents_suspended: 1, workflows_drained: 0, agent_ids: [agent.id] },
    });
    expect(revokedEvents()).toEqual([
      {
        kind: 'package.revoked',
        id: `package.revoked:${KEY}:7`,
        agent_id: null,
        data: { name: 'policy-servicing', version: '1.0.0', reason: 'policy-servicing 1.0.0 exfiltrates claims', seq: 7, agents_suspended: [agent.id], workflows_drained: [] },
      },
    ]);
  });

  it('suspends agents that depend on, or equip, a revoked package transitively, and drains workflows that need them', async () => {
    await installFleet();
    await catalog.install({ path: await write({ type: 'workflow-template', name: 'claims-flow', agents: ['claims-intake'] }) });
    await catalog.install({ path: await write({ type: 'workflow-template', name: 'policy-flow', agents: ['policy-servicing'] }) });
    const flow = (await catalog.get('claims-flow'))!.entity_id;
    const other = (await catalog.get('policy-flow'))!.entity_id;
    const intake = (await agents.getByName('claims-intake'))!.id;
    const helper = (await agents.getByName('claims-helper'))!.id;

    const outcome = await revocations.apply(revocation('loss-summary', '1.0.0', 1), KEY);
    expect(outcome).toMatchObject({ status: 'applied', installed: true, workflows_drained: [flow] });
    expect(outcome.status === 'applied' && [...outcome.agents_suspended].sort()).toEqual([intake, helper].sort());
    expect(await state('claims-intake')).toBe('Suspended');
    expect(await state('claims-helper')).toBe('Suspended');
    expect(await state('policy-servicing')).toBe('Running');
    // No run in flight: the revoked workflow stops admitting at once; the unrelated one still admits.
    expect(await admissionOf(store, flow, '1.0.0')).toBe('suspended');
    expect(await admissionOf(store, other, '1.0.0')).toBe('active');
    expect((await revokedAudit())[0]?.metadata).toMatchObject({ agents_suspended: 2, workflows_drained: 1 });
  });

  it('drains a revoked workflow template', async () => {
    await installFleet();
    await catalog.install({ path: await write({ type: 'workflow-template', name: 'policy-flow', agents: ['policy-servicing'] }) });
    const flow = (await catalog.get('policy-flow'))!.entity_id;
    expect(await revocations.apply(revocation('policy-flow', '1.0.0', 3), KEY)).toEqual({ status: 'applied', installed: true, agents_suspended: [], workflows_drained: [flow] });
    expect(await admissionOf(store, flow, '1.0.0')).toBe('suspended');
    expect(await state('policy-servicing')).toBe('Running');
  });

  it('is applied once when two nodes apply it at the same time', async () => {
    await installFleet();
    const otherNode = createRevocationService({ store, agents, lifecycle, clock, audit: createAuditTrail({ store, clock, enabled: true }), events });
    const outcomes = await Promise.all([revocations.apply(revocation('fnol-triage', '1.0.0', 2), KEY), otherNode.apply(revocation('fnol-triage', '1.0.0', 2), KEY)]);
    expect(outcomes.filter((o) => o.status === 'applied')).toHaveLength(1);
    expect(await revokedAudit()).toHaveLength(1);
    expect(revokedEvents()).toHaveLength(1);
    expect(await state('claims-intake')).toBe('Suspended');
    expect(emitted.filter((e) => e.kind === 'agent.suspended')).toHaveLength(2);
  });

  it('does not apply an entry again when the registry rotated its key and the feed is read from the start', async () => {
    await installFleet();
    await revocations.apply(revocation('policy-servicing', '1.0.0', 6), KEY);
    await revocations.override('policy-servicing', 'fixed build verified', OPERATOR);
    const agent = (await agents.getByName('policy-servicing'))!;
    await lifecycle.activate(agent.id);
    expect(await revocations.apply(revocation('policy-servicing', '1.0.0', 6), 'sha256:rotated-key')).toEqual({ status: 'already-applied' });
    expect(await state('policy-servicing')).toBe('Running');
    expect(await revokedAudit()).toHaveLength(1);
    expect((await catalog.installed()).find((p) => p.name === 'policy-servicing')?.revocation?.override).toMatchObject({ by: 'ops-lead' });
  });

  it('is taken over by another node when the node that claimed it died mid-way', async () => {
    await installFleet();
    const dying = createRevocationService({
      store,
      agents,
      lifecycle: { suspend: async () => Promise.reject(new Error('node killed')) },
      clock,
      audit,
      events,
    });
    await expect(dying.apply(revocation('policy-servicing', '1.0.0', 4), KEY)).rejects.toThrow('node killed');
    // Its lease holds: another node leaves the entry to it for now...
    expect(await revocations.apply(revocation('policy-servicing', '1.0.0', 4), KEY)).toEqual({ status: 'in-progress' });
    // ...and takes it over once the lease ran out.
    clock.advance(61_000);
    expect(await revocations.apply(revocation('policy-servicing', '1.0.0', 4), KEY)).toMatchObject({ status: 'applied', installed: true });
    expect(await state('policy-servicing')).toBe('Suspended');
    expect(await revokedAudit()).toHaveLength(1);
  });
  it('is not audited twice when the node that claimed it died after auditing but before marking it done', async () => {
    await installFleet();
    // The claim-done write is the one the SIGKILL prevents: the dying node's store drops it.
    const dyingStore = { ...store, collection: ((name: string, options?: unknown) => {
      const real = store.collection(name, options as never);
      if (name !== 'catalog_revocation_claims') return real;
      let writes = 0;
      return { ...real, update: async (...args: Parameters<typeof real.update>) => (++writes > 1 ? Promise.reject(new Error('node killed')) : real.update(...args)) };
    }) as typeof store.collection };
    const dying = createRevocationService({ store: dyingStore, agents, lifecycle, clock, audit, events });
    await expect(dying.apply(revocation('claims-intake', '1.0.0', 7), KEY)).rejects.toThrow('node killed');
    expect(await revokedAudit()).toHaveLength(1);
    clock.advance(61_000);
    expect(await revocations.apply(revocation('claims-intake', '1.0.0', 7), KEY)).toEqual({ status: 'already-applied' });
    expect(await revokedAudit()).toHaveLength(1);
    expect(revokedEvents()).toHaveLength(1);
    expect(await revocations.apply(revocation('claims-intake', '1.0.0', 7), KEY)).toEqual({ status: 'already-applied' });
  });
});

describe('refusals until an operator overrides', () => {
  it('remembers a revoked version that is not installed and refuses to install it', async () => {
    await installFleet();
    const outcome = await revocations.apply(revocation('policy-servicing', '2.0.0', 5), KEY);
    expect(outcome).toEqual({ status: 'applied', installed: false, agents_suspended: [], workflows_drained: [] });
    expect(await state('policy-servicing')).toBe('Running');
    expect((await catalog.installed()).find((p) => p.name === 'policy-servicing')).toMatchObject({ version: '1.0.0', revoked: false, revocation: null });
    expect((await revokedAudit())[0]).toMatchObject({ result: 'recorded', metadata: { installed: false } });

    const v2 = await writePackage(join(dir, 'v2'), { type: 'agent-template', name: 'policy-servicing', version: '2.0.0' });
    const refused = catalog.install({ path: v2 });
    await expect(refused).rejects.toMatchObject({
      category: 'CatalogError',
      message: expect.stringMatching(/policy-servicing 2\.0\.0 was revoked.*seq 5.*POST \/catalog\/installed\/policy-servicing\/override-revocation/),
    });
    expect((await catalog.get('policy-servicing'))?.version).toBe('1.0.0');

    const result = await revocations.override('policy-servicing', 'vendor shipped a fixed build under the same version', OPERATOR);
    expect(result.revocations).toEqual([
      expect.objectContaining({ version: '2.0.0', seq: 5, override: { reason: 'vendor shipped a fixed build under the same version', by: 'ops-lead', at: '2030-01-01T00:00:00.000Z' } }),
    ]);
    expect((await catalog.install({ path: v2 })).at(-1)).toMatchObject({ version: '2.0.0', status: 'upgraded' });
    // Installed again with its overridden revocation showing.
    expect((await catalog.installed()).find((p) => p.name === 'policy-servicing')).toMatchObject({ revoked: true, revocation: { override: { by: 'ops-lead' } } });
  });

  it('refuses to activate an affected agent until the override, which reactivates nothing', async () => {
    await installFleet();
    await revocations.apply(revocation('fnol-triage', '1.0.0', 2), KEY);
    const helper = (await agents.getByName('claims-helper'))!;
    await expect(lifecycle.activate(helper.id)).rejects.toMatchObject({
      category: 'ActivationError',
      message: expect.stringMatching(/claims-helper cannot be activated: package fnol-triage 1\.0\.0 was revoked.*\/catalog\/installed\/fnol-triage\/override-revocation/),
      details: { agent: 'claims-helper', revoked: [expect.objectContaining({ name: 'fnol-triage', override_route: '/catalog/installed/fnol-triage/override-revocation' })] },
    });
    // activate: true at install of another agent that equips it: refused, nothing written.
    const newcomer = await write({ type: 'agent-template', name: 'claims-newcomer', competencies: ['fnol-triage'] });
    await expect(catalog.install({ path: newcomer, activate: true })).rejects.toMatchObject({ category: 'ActivationError' });
    expect(await agents.getByName('claims-newcomer')).toBeNull();
    // Without activate it installs (Suspended): only running it is refused.
    await catalog.install({ path: newcomer });

    await expect(revocations.override('unknown-package', 'why not', OPERATOR)).rejects.toMatchObject({ category: 'NotFound' });
    await expect(revocations.override('fnol-triage', '   ', OPERATOR)).rejects.toMatchObject({ category: 'ValidationError' });
    await revocations.override('fnol-triage', 'false positive confirmed with the vendor', OPERATOR);
    expect(await state('claims-helper')).toBe('Suspended');
    expect((await lifecycle.activate(helper.id)).state).toBe('Running');
    await expect(revocations.override('fnol-triage', 'again', OPERATOR)).rejects.toMatchObject({ category: 'Conflict' });
    const overrides = (await audit.query({ limit: 10, category: 'agents' })).filter((e) => e.action === 'package.revocation.override');
    expect(overrides).toHaveLength(1);
    expect(overrides[0]).toMatchObject({ identity: 'ops-lead', role: 'operator', target: 'fnol-triage', metadata: { reason: 'false positive confirmed with the vendor', versions: ['1.0.0'] } });
  });

  it('clears revoked when the package is upgraded to a version that is not revoked', async () => {
    await installFleet();
    await revocations.apply(revocation('policy-servicing', '1.0.0', 9), KEY);
    expect((await catalog.installed()).find((p) => p.name === 'policy-servicing')?.revoked).toBe(true);
    await catalog.install({ path: await writePackage(join(dir, 'v11'), { type: 'agent-template', name: 'policy-servicing', version: '1.1.0' }) });
    expect((await catalog.installed()).find((p) => p.name === 'policy-servicing')).toMatchObject({ version: '1.1.0', revoked: false, revocation: null });
    // The fixed version activates; the revoked one stays refused should anyone reinstall it.
    const agent = (await agents.getByName('policy-servicing'))!;
    expect((await lifecycle.activate(agent.id)).state).toBe('Running');
  });
});
