import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { createAgentStats } from '../agents/create-agent-stats.ts';
import { createAgentStore, type AgentStore } from '../agents/agent-store.ts';
import { createSessionStore } from '../agents/create-session-store.ts';
import { composeSystemPrompt, loadAgentCompetencies } from '../agents/system-prompt.ts';
import type { SessionStore } from '../agents/session-store.ts';
import { createMemoryStore, MEMORY_COLLECTION, type MemoryStore } from '../memory/memory-store.ts';
import { fixedClock } from '../time/clock.ts';
import { CATALOG_COLLECTIONS } from './catalog-records.ts';
import { createCatalogService, type CatalogService } from './catalog-service.ts';
import { directoryPackageSource } from './package-source.ts';
import { writePackage, type PackageSpec } from './package-writer.fixture.ts';

let dir: string;
let pkgs: string;
let store: Store;
let agents: AgentStore;
let sessions: SessionStore;
let memory: MemoryStore;
let catalog: CatalogService;
let clock: ReturnType<typeof fixedClock>;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-catalog-'));
  clock = fixedClock('2030-01-01T00:00:00.000Z');
  pkgs = join(dir, 'packages');
  store = await openEmbeddedStore({ path: join(dir, 'platform.db') });
  agents = createAgentStore(store);
  sessions = createSessionStore(store, clock);
  memory = createMemoryStore(store, agents, clock);
  catalog = createCatalogService({
    store,
    agents,
    sessions,
    memory,
    clock,
    source: directoryPackageSource('0.1.0'),
  });
});

afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const write = (spec: PackageSpec) => writePackage(pkgs, spec);

/** claims-intake -> fnol-triage -> loss-summary, all as siblings. */
async function writeClaimsFamily(version = '1.0.0'): Promise<string> {
  await write({ type: 'skill', name: 'loss-summary' });
  await write({
    type: 'competency',
    name: 'fnol-triage',
    skills: ['loss-summary'],
    dependencies: { 'loss-summary': '^1.0.0' },
    body: 'Triage.',
  });
  return write({
    type: 'agent-template',
    name: 'claims-intake',
    version,
    competencies: ['fnol-triage'],
    dependencies: { 'fnol-triage': '^1.0.0' },
    body: `Intake v${version}.`,
  });
}

/** Every document of every collection the catalog writes, for "nothing changed" checks. */
async function snapshot(): Promise<Record<string, unknown[]>> {
  const names = ['agents', MEMORY_COLLECTION, 'sessions', ...Object.values(CATALOG_COLLECTIONS)];
  const out: Record<string, unknown[]> = {};
  for (const name of names) out[name] = (await store.collection(name).find()).map((v) => v.doc);
  return out;
}

describe('install', () => {
  it('installs dependencies first, from sibling directories', async () => {
    const items = await catalog.install({ path: await writeClaimsFamily() });
    expect(items.map((i) => [i.type, i.name, i.status])).toEqual([
      ['skill', 'loss-summary', 'installed'],
      ['competency', 'fnol-triage', 'installed'],
      ['agent-template', 'claims-intake', 'installed'],
    ]);
    const agent = await agents.getByName('claims-intake');
    expect(agent).toMatchObject({
      state: 'Suspended',
      equipped_competencies: ['fnol-triage'],
      running_since: null,
    });
    expect(items[2]?.id).toBe(agent?.id);
    expect(items[0]?.id).toBe('loss-summary');
    expect((await catalog.installed()).map((p) => p.name)).toEqual([
      'claims-intake',
      'fnol-triage',
      'loss-summary',
    ]);
    const record = await catalog.get('claims-intake');
    expect(record).toMatchObject({
      type: 'agent-template',
      version: '1.0.0',
      entity_id: agent?.id,
      dependencies: ['fnol-triage'],
    });
    expect((await store.collection('competencies').get('fnol-triage'))?.doc).toMatchObject({
      prompt: 'Triage.',
      skills: ['loss-summary'],
    });
  });

  it('reuses a dependency already installed at a satisfying version', async () => {
    await write({ type: 'skill', name: 'loss-summary' });
    await catalog.install({ path: join(pkgs, 'loss-summary') });
    const other = join(dir, 'elsewhere');
    const triage = await writePackage(other, {
      type: 'competency',
      name: 'fnol-triage',
      skills: ['loss-summary'],
      dependencies: { 'loss-summary': '^1.0.0' },
    });
    expect((await catalog.install({ path: triage })).map((i) => i.name)).toEqual(['fnol-triage']);
  });

  it('refuses a missing dependency naming it, and installs nothing at all', async () => {
    await write({ type: 'skill', name: 'loss-summary' });
    await catalog.install({ path: join(pkgs, 'loss-summary') });
    await write({
      type: 'competency',
      name: 'fnol-triage',
      dependencies: { 'loss-summary': '^1.0.0', 'policy-lookup': '^2.0.0' },
    });
    const root = await write({
      type: 'agent-template',
      name: 'claims-intake',
      dependencies: { 'fnol-triage': '*' },
    });
    const before = await snapshot();
    const error = await catalog.install({ path: root }).catch((e: unknown) => e);
    expect(error).toMatchObject({ category: 'MissingDependency' });
    expect((error as Error).message).toContain('policy-lookup ^2.0.0 (needed by fnol-triage');
    expect(await snapshot()).toEqual(before);
  });

  it('refuses a sibling whose version does not satisfy the constraint', async () => {
    await write({ type: 'skill', name: 'loss-summary', version: '2.0.0' });
    const root = await write({
      type: 'competency',
      name: 'fnol-triage',
      dependencies: { 'loss-summary': '^1.0.0' },
    });
    await expect(catalog.install({ path: root })).rejects.toMatchObject({
      category: 'MissingDependency',
      message: expect.stringContaining('holds version 2.0.0'),
    });
    expect(await catalog.installed()).toEqual([]);
  });

  it('refuses a dependency cycle', async () => {
    await write({ type: 'skill', name: 'skill-a', dependencies: { 'skill-b': '*' } });
    await write({ type: 'skill', name: 'skill-b', dependencies: { 'skill-a': '*' } });
    await expect(catalog.install({ path: join(pkgs, 'skill-a') })).rejects.toMatchObject({
      category: 'CatalogError',
      message: 'dependency cycle: skill-a -> skill-b -> skill-a',
    });
    expect(await catalog.installed()).toEqual([]);
  });

  it('installs a workflow after the agents it requires', async () => {
    await write({ type: 'agent-template', name: 'policy-servicing' });
    const root = await write({
      type: 'workflow-template',
      name: 'servicing-flow',
      agents: ['policy-servicing'],
    });
    const items = await catalog.install({ path: root });
    expect(items.map((i) => i.name)).toEqual(['policy-servicing', 'servicing-flow']);
    const workflow = (await store.collection('workflows').find())[0]?.doc;
    expect(workflow).toMatchObject({
      id: items[1]?.id,
      name: 'servicing-flow',
      steps: [expect.objectContaining({ timeout_secs: 30 })],
    });
  });

  it('is idempotent for the same name and version', async () => {
    const root = await writeClaimsFamily();
    const first = await catalog.install({ path: root });
    const before = await snapshot();
    const again = await catalog.install({ path: root });
    expect(again).toEqual([
      {
        type: 'agent-template',
        name: 'claims-intake',
        version: '1.0.0',
        id: first[2]?.id,
        status: 'unchanged',
      },
    ]);
    expect(await snapshot()).toEqual(before);
  });

  it('upgrades in place: same id, state, memory and sessions; new prompt', async () => {
    await catalog.install({ path: await writeClaimsFamily('1.0.0'), activate: true });
    const v1 = await agents.getByName('claims-intake');
    await memory.put(v1!.id, 'policy', 'P-1');
    await sessions.append(v1!.id, [{ role: 'user', content: 'hi', at: 'x' }], 10);
    clock.advance(1000);
    const items = await catalog.install({ path: await writeClaimsFamily('1.1.0') });
    expect(items).toEqual([
      { type: 'agent-template', name: 'claims-intake', version: '1.1.0', id: v1!.id, status: 'upgraded' },
    ]);
    const v2 = await agents.get(v1!.id);
    expect(v2).toMatchObject({
      version: '1.1.0',
      prompt: 'Intake v1.1.0.',
      state: 'Running',
      running_since: v1!.running_since,
      created_at: v1!.created_at,
    });
    expect(await memory.get(v1!.id, 'policy')).toEqual({ key: 'policy', value: 'P-1' });
    expect(await sessions.history(v1!.id)).toHaveLength(1);
    expect((await catalog.installed()).find((p) => p.name === 'claims-intake')).toMatchObject({
      version: '1.1.0',
      installed_at: v1!.created_at,
    });
  });

  it('refuses a downgrade', async () => {
    await catalog.install({ path: await writeClaimsFamily('1.2.0') });
    const before = await snapshot();
    await expect(catalog.install({ path: await writeClaimsFamily('1.1.0') })).rejects.toMatchObject({
      category: 'CatalogError',
      message: expect.stringContaining('no downgrade'),
    });
    expect(await snapshot()).toEqual(before);
  });

  it('undoes the writes already made when a later one fails', async () => {
    const root = await writeClaimsFamily();
    const before = await snapshot();
    const failing: AgentStore = {
      ...agents,
      insert: async () => {
        throw new Error('disk full');
      },
    };
    const faulty = createCatalogService({
      store,
      agents: failing,
      sessions,
      memory,
      clock,
      source: directoryPackageSource('0.1.0'),
    });
    await expect(faulty.install({ path: root })).rejects.toThrow('disk full');
    expect(await snapshot()).toEqual(before);
  });

  it('refuses installs by name (no registry yet), relative paths and invalid packages', async () => {
    await expect(catalog.install({ name: 'claims-intake' })).rejects.toMatchObject({
      category: 'CatalogError',
    });
    await expect(catalog.install({ path: 'examples/claims-intake' })).rejects.toMatchObject({
      category: 'ValidationError',
    });
    await expect(catalog.install({ path: join(pkgs, 'absent') })).rejects.toMatchObject({
      category: 'ValidationError',
    });
    const bad = await write({ type: 'skill', name: 'bad--name' });
    await expect(catalog.install({ path: bad })).rejects.toMatchObject({
      category: 'ValidationError',
      details: { problems: [expect.objectContaining({ rule: 'no-consecutive-hyphens' })] },
    });
  });
});

describe('install with activate: true', () => {
  async function writeContractFamily(withIntegration: boolean): Promise<string> {
    await write({ type: 'skill', name: 'loss-summary' });
    await write({
      type: 'competency',
      name: 'fnol-triage',
      contracts: ['claims-system'],
      dependencies: { 'loss-summary': '*' },
    });
    if (withIntegration)
      await write({ type: 'integration', name: 'acme-claims', implements: ['claims-system'] });
    return write({
      type: 'agent-template',
      name: 'claims-intake',
      competencies: ['fnol-triage'],
      dependencies: { 'fnol-triage': '*', ...(withIntegration ? { 'acme-claims': '*' } : {}) },
    });
  }

  it('refuses a plan that brings an integration from a directory unless the caller may install one', async () => {
    const error = await catalog.install({ path: await writeContractFamily(true) }).then(() => null, (e: unknown) => e);
    expect(error).toMatchObject({ category: 'PermissionDenied' });
    expect((error as Error).message).toMatch(/acme-claims .*IntegrationInstall/);
    expect(await catalog.installed()).toEqual([]);
  });

  it('starts the agent Running when the contract check passes', async () => {
    // It brings an integration from a directory: the caller holds IntegrationInstall (admin).
    const items = await catalog.install({ path: await writeContractFamily(true), activate: true, integrationsFromPath: true });
    expect(items.map((i) => i.name)).toEqual(['loss-summary', 'fnol-triage', 'acme-claims', 'claims-intake']);
    expect(await agents.getByName('claims-intake')).toMatchObject({
      state: 'Running',
      running_since: '2030-01-01T00:00:00.000Z',
    });
  });

  it('fails with ActivationError naming the contract, installing nothing', async () => {
    const root = await writeContractFamily(false);
    const error = await catalog.install({ path: root, activate: true }).catch((e: unknown) => e);
    expect(error).toMatchObject({
      category: 'ActivationError',
      details: { missing_contracts: ['claims-system'] },
    });
    expect((error as Error).message).toContain('claims-system');
    expect(await catalog.installed()).toEqual([]);
    expect(await agents.list()).toEqual([]);
  });
});

describe('uninstall', () => {
  it('is NotFound when not installed', async () => {
    await expect(catalog.uninstall('claims-intake')).rejects.toMatchObject({ category: 'NotFound' });
  });

  it('refuses while the agent is Running, then removes it with its memory, sessions and stats', async () => {
    await catalog.install({ path: await writeClaimsFamily(), activate: true });
    const agent = (await agents.getByName('claims-intake'))!;
    await memory.put(agent.id, 'k', 'v');
    await sessions.append(agent.id, [{ role: 'user', content: 'hi', at: 'x' }], 10);
    const stats = createAgentStats(store);
    await stats.received(agent.id, 'Api');
    await stats.finished(agent.id, 'Api', { ok: true, duration_ms: 10 });

    await expect(catalog.uninstall('claims-intake')).rejects.toMatchObject({
      category: 'Conflict',
      message: expect.stringContaining('Running'),
    });
    expect(await agents.get(agent.id)).not.toBeNull();

    await agents.update(agent.id, (a) => ({ ...a, state: 'Suspended', running_since: null }));
    await catalog.uninstall('claims-intake');
    expect(await agents.get(agent.id)).toBeNull();
    expect(await catalog.get('claims-intake')).toBeNull();
    expect(await store.collection(MEMORY_COLLECTION).find()).toEqual([]);
    expect(await sessions.history(agent.id)).toEqual([]);
    expect((await stats.read(agent.id)).invocation_metrics.total_count).toBe(0);
    expect((await stats.read(agent.id)).tasks_received).toBe(0);
    // Its dependencies stay installed: uninstall removes one package.
    expect((await catalog.installed()).map((p) => p.name)).toEqual(['fnol-triage', 'loss-summary']);
  });

  it('refuses while another installed package depends on it, naming the dependents', async () => {
    await catalog.install({ path: await writeClaimsFamily() });
    await expect(catalog.uninstall('loss-summary')).rejects.toMatchObject({
      category: 'Conflict',
      details: { dependents: ['fnol-triage'] },
    });
    await catalog.uninstall('claims-intake');
    await catalog.uninstall('fnol-triage');
    await catalog.uninstall('loss-summary');
    expect(await snapshot()).toEqual(Object.fromEntries(Object.keys(await snapshot()).map((k) => [k, []])));
  });
});

describe('system prompt of an installed agent', () => {
  it('follows the equip order, not the install order', async () => {
    await write({ type: 'competency', name: 'zz-first', body: 'Zeta prompt.' });
    await write({ type: 'competency', name: 'aa-second', body: 'Alpha prompt.' });
    const root = await write({
      type: 'agent-template',
      name: 'claims-intake',
      competencies: ['zz-first', 'aa-second'],
      dependencies: { 'aa-second': '*', 'zz-first': '*' },
      body: 'Agent prompt.',
    });
    await catalog.install({ path: root });
    const agent = (await agents.getByName('claims-intake'))!;
    const competencies = await loadAgentCompetencies(store, agent);
    expect(composeSystemPrompt(agent, competencies)).toBe('Agent prompt.\n\nZeta prompt.\n\nAlpha prompt.');
  });
});

describe('templates', () => {
  it('lists installed agent templates only', async () => {
    await catalog.install({ path: await writeClaimsFamily() });
    expect(await catalog.templates()).toEqual([
      {
        name: 'claims-intake',
        title: 'Title of claims-intake',
        version: '1.0.0',
        description: 'The agent-template claims-intake.',
        competencies: ['fnol-triage'],
      },
    ]);
  });
});
