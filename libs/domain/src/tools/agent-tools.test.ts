import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuditTrail } from '../audit/audit-entry.ts';
import { createAuditTrail } from '../audit/audit-trail.ts';
import { catalogCollections, type CompetencyRecord, type ContractRecord, type IntegrationRecord } from '../catalog/catalog-records.ts';
import type { IntegrationTool, IntegrationTools } from '../integrations/integration-tools.ts';
import type { ToolContext } from '../invocation/invocation-types.ts';
import { memoryJournal } from '../testing/memory-journal.ts';
import type { ToolCallJournal } from './tool-call-journal.ts';
import { agentFixture } from '../testing/agent-fixture.ts';
import { systemClock } from '../time/clock.ts';
import { createAgentTools } from './agent-tools.ts';
import { bindCompetencyContracts, listContractBindings } from './contract-bindings.ts';

/**
 * A claims system as an integration sees it: a read-only lookup and a state-changing open, with
 * native field names that differ from the contract's. Records every call it receives.
 */
class ClaimsSystem implements IntegrationTools {
  readonly calls: Array<{ tool: string; args: Record<string, unknown>; key: string | undefined }> = [];
  readonly liveTools: IntegrationTool[] = [
    { name: 'get_policy', description: 'Look up a policy.', input_schema: { type: 'object', properties: { policy_no: { type: 'string' } } }, read_only: true },
    { name: 'create_claim', description: 'Open a claim.', input_schema: { type: 'object', properties: { policy_no: { type: 'string' }, loss: { type: 'string' } } }, read_only: false },
  ];
  async tools(): Promise<IntegrationTool[]> {
    return this.liveTools;
  }
  async call(_id: string, tool: string, args: Record<string, unknown>, options: { idempotencyKey?: string }) {
    this.calls.push({ tool, args, key: options.idempotencyKey });
    if (tool === 'get_policy') return { text: JSON.stringify({ policy_no: args.policy_no, holder_name: 'Ada' }), is_error: false };
    return { text: JSON.stringify({ claim_no: 'C-1' }), is_error: false };
  }
}

const T0 = '2026-11-25T10:00:00.000Z';

function competency(overrides: Partial<CompetencyRecord>): CompetencyRecord {
  return {
    id: 'claims-handling', name: 'claims-handling', version: '1.0.0', description: 'd', prompt: 'p', skills: [], tools: [], contracts: [], integrations: [],
    settings: [], inputs: [], outputs: [], schedule: null, schedule_action: null, installed_at: T0, updated_at: T0, ...overrides,
  };
}

const contract: ContractRecord = {
  id: 'claims-api', name: 'claims-api', version: '1.0.0', description: 'd', schema_version: '1', installed_at: T0, updated_at: T0,
  tools: [
    { name: 'lookup_policy', input_schema: { type: 'object', properties: { policy_number: { type: 'string' } } }, read_only: true },
    { name: 'open_claim', input_schema: { type: 'object', properties: { policy_number: { type: 'string' }, description: { type: 'string' } } } },
  ],
};

function integration(fieldMap: Record<string, Record<string, string>>): IntegrationRecord {
  return {
    id: 'claims-system', name: 'claims-system', version: '1.0.0', description: 'd', transport: 'mcp', payload: {}, installed_at: T0, updated_at: T0,
    implements: { 'claims-api': { version: '^1', tool_map: { lookup_policy: 'get_policy', open_claim: 'create_claim' }, field_map: fieldMap } },
  };
}

const GOOD_MAP = { lookup_policy: { policy_number: 'policy_no' }, open_claim: { policy_number: 'policy_no', description: 'loss' } };

describe('agent tools', () => {
  let dir: string;
  let store: Store;
  let audit: AuditTrail;
  let claims: ClaimsSystem;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agent-tools-'));
    store = await openEmbeddedStore({ path: join(dir, 'platform.db') });
    audit = createAuditTrail({ store, clock: systemClock, enabled: true });
    claims = new ClaimsSystem();
    const catalog = catalogCollections(store);
    await catalog.contracts.insert(contract);
    await catalog.integrations.insert(integration(GOOD_MAP));
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  function tools() {
    return createAgentTools({ store, integrations: claims, findSkill: async () => null, audit, now: () => new Date(), warn: () => undefined, worker: 'w-1' });
  }

  function context(journal?: ToolCallJournal): ToolContext {
    return { request: { agent_id: 'a', source: 'Api', message: 'm', correlation_id: 'corr-1', invocation_id: 'inv-1' }, options: journal ? { toolJournal: journal } : {}, signal: new AbortController().signal };
  }

  it('binds the contract at equip time and translates tools and fields both ways', async () => {
    const equipped = competency({ contracts: ['claims-api'] });
    await catalogCollections(store).competencies.insert(equipped);
    await bindCompetencyContracts({ store, now: () => new Date(T0), liveTools: async () => claims.liveTools }, [equipped]);
    expect(await listContractBindings(store)).toEqual([{ contract: 'claims-api', integration_id: 'claims-system', bound_at: T0, bound_by: 'system' }]);

    const agent = agentFixture({ equipped_competencies: ['claims-handling'] });
    const { bindings } = await tools().toolsFor(agent, context());
    expect(bindings.map((b) => [b.spec.name, b.skill_id])).toEqual([['lookup_policy', 'claims-system'], ['open_claim', 'claims-system']]);
    const lookup = bindings.find((b) => b.spec.name === 'lookup_policy')!;
    expect(JSON.parse(await lookup.execute({ policy_number: 'P-7' }, {}))).toEqual({ policy_number: 'P-7', holder_name: 'Ada' });
    expect(claims.calls[0]).toEqual({ tool: 'get_policy', args: { policy_no: 'P-7' }, key: undefined });
    await bindings.find((b) => b.spec.name === 'open_claim')!.execute({ policy_number: 'P-7', description: 'hail' }, {});
    // A state-changing call outside a workflow carries `<invocation>:<n>` as its idempotency key.
    expect(claims.calls[1]).toEqual({ tool: 'create_claim', args: { policy_no: 'P-7', loss: 'hail' }, key: 'inv-1:0' });
  });

  it('refuses a bind whose mapping the live tools cannot carry, naming the tool and field, and writes nothing', async () => {
    await catalogCollections(store).integrations.upsert(integration({ ...GOOD_MAP, open_claim: { description: 'loss_text' } }));
    const equipped = competency({ contracts: ['claims-api'] });
    await expect(bindCompetencyContracts({ store, now: () => new Date(T0), liveTools: async () => claims.liveTools }, [equipped])).rejects.toMatchObject({
      category: 'ValidationError',
      message: expect.stringMatching(/field 'description' of contract tool 'open_claim' maps to 'loss_text', which 'create_claim' does not accept/),
    });
    expect(await listContractBindings(store)).toEqual([]);
  });

  it('hides integration tools the agent may not use and refuses a call to them, in the audit trail too', async () => {
    await catalogCollections(store).competencies.insert(competency({ integrations: ['claims-system'] }));
    const agent = agentFixture({ equipped_competencies: ['claims-handling'], allow_integration_tools: ['get_policy'] });
    const { bindings } = await tools().toolsFor(agent, context());
    const open = bindings.find((b) => b.spec.name === 'create_claim')!;
    expect(open.hidden).toBe(true);
    expect(bindings.find((b) => b.spec.name === 'get_policy')!.hidden).toBeUndefined();
    await expect(open.execute({ policy_no: 'P-1' }, {})).rejects.toMatchObject({ category: 'PermissionDenied', message: expect.stringMatching(/may not use tool 'create_claim'.*allow_integration_tools/) });
    expect(claims.calls).toEqual([]);
    const [entry] = await audit.query({ limit: 10, category: 'tools' });
    expect(entry).toMatchObject({ identity: `agent:${agent.name}`, action: 'tool.call create_claim', target: 'claims-system', result: 'refused' });
    expect(entry!.metadata).toMatchObject({ agent_id: agent.id, args_hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
    expect(JSON.stringify(entry)).not.toContain('P-1');
  });

  it('journals a state-changing call before it is made and records its answer after; read-only calls are not journaled', async () => {
    await catalogCollections(store).competencies.insert(competency({ integrations: ['claims-system'] }));
    const agent = agentFixture({ equipped_competencies: ['claims-handling'], allow_integration_tools: ['*'] });
    const journal = memoryJournal('run-1:0.0');
    const seen: string[] = [];
    const write = journal.write.bind(journal);
    journal.write = async (entry) => {
      seen.push(`${entry.state} ${entry.native_tool} (${claims.calls.length} calls so far)`);
      await write(entry);
    };
    const { bindings } = await tools().toolsFor(agent, context(journal));
    await bindings.find((b) => b.spec.name === 'get_policy')!.execute({ policy_no: 'P-1' }, {});
    await bindings.find((b) => b.spec.name === 'create_claim')!.execute({ policy_no: 'P-1', loss: 'hail' }, {});
    expect(seen).toEqual(['started create_claim (1 calls so far)', 'answered create_claim (2 calls so far)']);
    expect(claims.calls[1]!.key).toBe('run-1:0.0:0');
    expect(journal.entries).toEqual([expect.objectContaining({ position: 0, tool: 'create_claim', state: 'answered', result: JSON.stringify({ claim_no: 'C-1' }), worker: 'w-1' })]);
  });
});
