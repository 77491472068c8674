import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import type { AgentRecord } from '../agents/agent-record.ts';
import { createAgentStore, type AgentStore } from '../agents/agent-store.ts';
import { createSessionStore } from '../agents/create-session-store.ts';
import { createCatalogService, type CatalogService } from '../catalog/catalog-service.ts';
import { directoryPackageSource } from '../catalog/package-source.ts';
import { writePackage } from '../catalog/package-writer.fixture.ts';
import { createMemoryStore } from '../memory/memory-store.ts';
import { fixedClock } from '../time/clock.ts';
import { createEquipEffects, type EquipEffect } from './equip-effects.ts';

// The catalog runs equip effects inside its all-or-nothing (docs/competencies.md "Equip
// effects"): a failing effect undoes the install, and the effects are run again to match.
let dir: string;
let store: Store;
let agents: AgentStore;
let catalog: CatalogService;
/** What a recording effect believes each agent equips (its "world"). */
let world: Map<string, string[]>;
let failOn: string | null;
const warnings: string[] = [];

function recordingEffect(): EquipEffect {
  return {
    name: 'recording',
    async syncAgent(agent: AgentRecord) {
      if (failOn !== null && agent.equipped_competencies.includes(failOn))
        throw new Error(`cannot equip ${failOn}`);
      world.set(agent.id, [...agent.equipped_competencies]);
    },
    async agentRemoved(agentId) {
      world.delete(agentId);
    },
  };
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-effects-'));
  const clock = fixedClock('2030-01-01T00:00:00.000Z');
  store = await openEmbeddedStore({ path: join(dir, 'platform.db') });
  agents = createAgentStore(store);
  world = new Map();
  failOn = null;
  warnings.length = 0;
  catalog = createCatalogService({
    store,
    agents,
    sessions: createSessionStore(store, clock),
    memory: createMemoryStore(store, agents, clock),
    clock,
    source: directoryPackageSource('0.1.0'),
    effects: createEquipEffects({ agents, warn: (_c, message) => warnings.push(message) }, [
      recordingEffect(),
    ]),
  });
});

afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const pkgs = () => join(dir, 'packages');

describe('equip effects through the catalog', () => {
  it('runs for installed agents, for agents equipping an upgraded competency, and on uninstall', async () => {
    await writePackage(pkgs(), { type: 'competency', name: 'fnol-triage' });
    await catalog.install({ path: join(pkgs(), 'fnol-triage') });
    const path = await writePackage(pkgs(), {
      type: 'agent-template',
      name: 'claims-intake',
      competencies: ['fnol-triage'],
    });
    const [item] = await catalog.install({ path });
    expect(world).toEqual(new Map([[item!.id, ['fnol-triage']]]));

    world.clear();
    await writePackage(pkgs(), { type: 'competency', name: 'fnol-triage', version: '1.1.0' });
    await catalog.install({ path: join(pkgs(), 'fnol-triage') });
    expect([...world.keys()]).toEqual([item!.id]);

    await catalog.uninstall('claims-intake');
    expect(world.size).toBe(0);
  });

  it('undoes the install when an effect fails, and runs the effects again over what was put back', async () => {
    await writePackage(pkgs(), { type: 'competency', name: 'fnol-triage' });
    await writePackage(pkgs(), { type: 'competency', name: 'fraud-check' });
    const v1 = await writePackage(pkgs(), {
      type: 'agent-template',
      name: 'claims-intake',
      competencies: ['fnol-triage'],
      dependencies: { 'fnol-triage': '^1.0.0' },
    });
    const [, agentItem] = await catalog.install({ path: v1 });
    failOn = 'fraud-check';
    const v2 = await writePackage(pkgs(), {
      type: 'agent-template',
      name: 'claims-intake',
      version: '2.0.0',
      competencies: ['fnol-triage', 'fraud-check'],
      dependencies: { 'fraud-check': '^1.0.0' },
    });
    await expect(catalog.install({ path: v2 })).rejects.toThrow('cannot equip fraud-check');
    expect((await catalog.installed()).map((p) => `${p.name}@${p.version}`)).toEqual([
      'claims-intake@1.0.0',
      'fnol-triage@1.0.0',
    ]);
    expect((await agents.get(agentItem!.id))?.equipped_competencies).toEqual(['fnol-triage']);
    expect(world.get(agentItem!.id)).toEqual(['fnol-triage']);
  });

  it('reports a failing effect after an uninstall through warn, the uninstall itself done', async () => {
    await writePackage(pkgs(), { type: 'competency', name: 'fnol-triage' });
    const path = await writePackage(pkgs(), {
      type: 'agent-template',
      name: 'claims-intake',
      competencies: ['fnol-triage'],
    });
    await catalog.install({ path });
    await catalog.install({ path: join(pkgs(), 'fnol-triage') });
    failOn = 'fnol-triage';
    // The competency goes; its agent still lists it, so the recording effect fails on that agent.
    await catalog.uninstall('fnol-triage');
    expect((await catalog.installed()).map((p) => p.name)).toEqual(['claims-intake']);
    expect(warnings).toEqual([expect.stringContaining('schedule-health')]);
  });
});
