import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import type { Store } from '@agent-platform/store';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AGENTS_COLLECTION, type AgentRecord } from '../agents/agent-record.ts';
import {
  catalogCollections,
  type CompetencyRecord,
  type IntegrationRecord,
} from '../catalog/catalog-records.ts';
import { agentFixture } from '../testing/agent-fixture.ts';
import { liveConsumers } from './live-consumers.ts';

let dir: string;
let store: Store;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-live-consumers-'));
  store = await openEmbeddedStore({ path: join(dir, 'platform.db') });
  const records = catalogCollections(store);
  const integration: IntegrationRecord = {
    id: 'acme-claims',
    name: 'acme-claims',
    version: '1.0.0',
    description: '',
    transport: 'mcp',
    implements: { 'claims-system': { version: '^1', tool_map: {}, field_map: {} } },
    payload: {},
    installed_at: '',
    updated_at: '',
  };
  await records.integrations.insert(integration);
  const competency = (id: string, contracts: string[], integrations: string[]): CompetencyRecord => ({
    id,
    name: id,
    version: '1.0.0',
    description: '',
    prompt: '',
    skills: [],
    tools: [],
    contracts,
    integrations,
    settings: [],
    inputs: [],
    outputs: [],
    schedule: null,
    schedule_action: null,
    installed_at: '',
    updated_at: '',
  });
  await records.competencies.insert(competency('by-contract', ['claims-system', 'crm'], []));
  await records.competencies.insert(competency('by-name', [], ['acme-claims']));
  await records.competencies.insert(competency('unrelated', ['crm'], ['other']));
});

afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const agent = (overrides: Partial<AgentRecord>) =>
  store.collection<AgentRecord>(AGENTS_COLLECTION).insert(agentFixture(overrides));

describe('liveConsumers', () => {
  it('lists Running agents whose competencies name a contract it implements or the integration itself', async () => {
    const a = (
      await agent({ name: 'b-agent', state: 'Running', equipped_competencies: ['by-contract', 'unrelated'] })
    ).doc;
    const b = (await agent({ name: 'a-agent', state: 'Running', equipped_competencies: ['by-name'] })).doc;
    expect(await liveConsumers(store, 'acme-claims')).toEqual([
      { agent_id: b.id, agent: 'a-agent', competency: 'by-name', contract: null },
      { agent_id: a.id, agent: 'b-agent', competency: 'by-contract', contract: 'claims-system' },
    ]);
  });

  it('ignores Suspended agents, unrelated competencies and competencies that are not installed', async () => {
    await agent({ name: 'sleeping', state: 'Suspended', equipped_competencies: ['by-contract'] });
    await agent({
      name: 'elsewhere',
      state: 'Running',
      equipped_competencies: ['unrelated', 'not-installed'],
    });
    expect(await liveConsumers(store, 'acme-claims')).toEqual([]);
    expect(await liveConsumers(store, 'not-installed-integration')).toEqual([]);
  });
});
