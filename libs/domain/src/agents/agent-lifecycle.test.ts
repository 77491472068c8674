import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Subjects, type AgentAbortMessage } from '@agent-platform/contracts';
import type { Bus } from '@agent-platform/bus';
import { createEmbeddedBus } from '@agent-platform/bus/embedded';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { waitUntil } from '@agent-platform/testkit';
import { createCatalogService, type CatalogService } from '../catalog/catalog-service.ts';
import { directoryPackageSource } from '../catalog/package-source.ts';
import { writePackage } from '../catalog/package-writer.fixture.ts';
import { createMemoryStore } from '../memory/memory-store.ts';
import { fixedClock } from '../time/clock.ts';
import { createAgentLifecycle, assertAgentRunning, type AgentLifecycle } from './agent-lifecycle.ts';
import { createAgentStore, type AgentStore } from './agent-store.ts';
import { createSessionStore } from './create-session-store.ts';

let dir: string;
let store: Store;
let bus: Bus;
let agents: AgentStore;
let catalog: CatalogService;
let lifecycle: AgentLifecycle;
let clock: ReturnType<typeof fixedClock>;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-lifecycle-'));
  clock = fixedClock('2030-01-01T00:00:00.000Z');
  store = await openEmbeddedStore({ path: join(dir, 'platform.db') });
  bus = createEmbeddedBus();
  agents = createAgentStore(store);
  const sessions = createSessionStore(store, clock);
  const memory = createMemoryStore(store, agents, clock);
  catalog = createCatalogService({
    store,
    agents,
    sessions,
    memory,
    clock,
    source: directoryPackageSource('0.1.0'),
  });
  lifecycle = createAgentLifecycle({ store, agents, bus, clock });
});

afterEach(async () => {
  await bus.close();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

/** An agent equipping a competency that needs contract `claims-system`; returns its id. */
async function installAgent(): Promise<string> {
  const root = join(dir, 'pkgs');
  await writePackage(root, { type: 'skill', name: 'loss-summary' });
  await writePackage(root, {
    type: 'competency',
    name: 'fnol-triage',
    skills: ['loss-summary'],
    contracts: ['claims-system'],
    dependencies: { 'loss-summary': '*' },
  });
  const path = await writePackage(root, {
    type: 'agent-template',
    name: 'claims-intake',
    competencies: ['fnol-triage'],
    dependencies: { 'fnol-triage': '*' },
  });
  const items = await catalog.install({ path });
  return items.at(-1)!.id;
}

async function installIntegration(): Promise<void> {
  const path = await writePackage(join(dir, 'integrations'), {
    type: 'integration',
    name: 'acme-claims',
    implements: ['claims-system'],
  });
  // From a directory: the caller holds IntegrationInstall (admin; docs/integrations.md).
  await catalog.install({ path, integrationsFromPath: true });
}

describe('agent lifecycle', () => {
  it('refuses activation while no integration implements a required contract, checked fresh each time', async () => {
    const id = await installAgent();
    const error = await lifecycle.activate(id).catch((e: unknown) => e);
    expect(error).toMatchObject({
      category: 'ActivationError',
      details: { agent_id: id, missing_contracts: ['claims-system'] },
    });
    expect((error as Error).message).toBe(
      'agent claims-intake cannot be activated: no installed integration implements the contract(s) claims-system',
    );
    expect((await agents.get(id))?.state).toBe('Suspended');

    await installIntegration();
    const running = await lifecycle.activate(id);
    expect(running).toMatchObject({ state: 'Running', running_since: '2030-01-01T00:00:00.000Z' });
  });

  it('refuses activate when Running and suspend when Suspended, naming the state and the valid command', async () => {
    const id = await installAgent();
    await installIntegration();
    await expect(lifecycle.suspend(id)).rejects.toMatchObject({
      category: 'InvalidState',
      message: 'agent claims-intake is already Suspended; use activate',
    });
    await lifecycle.activate(id);
    await expect(lifecycle.activate(id)).rejects.toMatchObject({
      category: 'InvalidState',
      message: 'agent claims-intake is already Running; use suspend',
      details: { state: 'Running', valid_command: 'suspend' },
    });
  });

  it('suspends, clears running_since and tells workers to abort the agent', async () => {
    const id = await installAgent();
    await installIntegration();
    await lifecycle.activate(id);
    const notices: AgentAbortMessage[] = [];
    await bus.listen<AgentAbortMessage>(Subjects.agentAbort, (n) => notices.push(n));
    const suspended = await lifecycle.suspend(id);
    expect(suspended).toMatchObject({ state: 'Suspended', running_since: null });
    await waitUntil(() => notices.length > 0, { message: 'the abort notice' });
    expect(notices).toEqual([{ agent_id: id, reason: 'suspended' }]);
    expect(() => assertAgentRunning(suspended)).toThrow(
      'agent claims-intake is Suspended; activate it first',
    );
  });

  it('is NotFound for an unknown agent', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    await expect(lifecycle.activate(unknown)).rejects.toMatchObject({ category: 'NotFound' });
    await expect(lifecycle.suspend(unknown)).rejects.toMatchObject({ category: 'NotFound' });
  });
});
