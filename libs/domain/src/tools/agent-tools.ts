import type { Store } from '@agent-platform/store';
import type { AgentRecord } from '../agents/agent-record.ts';
import { loadAgentCompetencies } from '../agents/system-prompt.ts';
import { catalogCollections, type CompetencyRecord, type IntegrationRecord, type SkillRecord } from '../catalog/catalog-records.ts';
import type { IntegrationTools } from '../integrations/integration-tools.ts';
import type { AgentToolSet, AgentToolsProvider, ToolContext } from '../invocation/invocation-types.ts';
import type { ToolBinding } from '../models/tool-loop.ts';
import { contractBindings } from './contract-bindings.ts';
import { nativeToolName, toContractResult, toNativeArgs } from './contract-translation.ts';
import { openCallSequence } from './journaled-calls.ts';
import { transientJournal, type ToolCallJournal } from './tool-call-journal.ts';
import { fencedJournal } from '../invocation/invocation-fences.ts';
import { auditSubject, bindTarget, type ToolCallEffects, type ToolTarget } from './tool-target.ts';
import { toolAllowed } from './tool-permission.ts';

export interface AgentToolsDeps extends ToolCallEffects {
  store: Store;
  /** The integrations this process runs; absent: no integration or contract tools. */
  integrations?: IntegrationTools;
  /** An installed or bundled skill by id. */
  findSkill: (id: string) => Promise<SkillRecord | null>;
  /** The tools of a starlark skill (skills issue); absent: none. */
  skillTools?: (skill: SkillRecord) => ToolBinding[];
  /**
   * Whether an integration's server honours idempotency keys (`[integrations.idempotent_keys]`,
   * else its manifest's `[standards] idempotent_keys`); absent: none does.
   */
  idempotentKeys?: (integration: IntegrationRecord) => boolean;
}

/**
 * The tools of an agent (docs/tools.md): the starlark tools of the skills its competencies list
 * (allowed by `allow_skill_tools`), the tools of the integrations its competencies list (allowed
 * by `allow_integration_tools`) and the tools of the contracts its competencies list, called
 * through the bound integration (equipping the competency is the grant). A name offered twice
 * keeps its first provider in that order.
 */
export function createAgentTools(deps: AgentToolsDeps): AgentToolsProvider {
  async function toolsFor(agent: AgentRecord, context: ToolContext): Promise<AgentToolSet> {
    const subject = auditSubject(agent, context);
    // Opened first: a journal a re-run cannot get past refuses it before anything else is read.
    const journal = context.options.toolJournal ?? keylessJournal(context);
    const calls = await openCallSequence(journal, subject, deps);
    const competencies = context.competencies ?? (await loadAgentCompetencies(deps.store, agent));
    const targets = [...(await skillTargets(agent, competencies)), ...(await integrationTargets(agent, competencies)), ...(await contractTargets(competencies))];
    const seen = new Set<string>();
    const bindings: ToolBinding[] = [];
    for (const target of targets) {
      if (seen.has(target.spec.name)) continue;
      seen.add(target.spec.name);
      bindings.push(bindTarget(target, subject, deps, calls));
    }
    return { bindings, finish: () => calls.finish() };
  }

  /**
   * An invocation without a key: a transient journal, fenced (invocation-fences.ts) when its
   * requester may abandon it and send it again (`options.fence`, set for `options.abandonable`).
   */
  function keylessJournal(context: ToolContext): ToolCallJournal {
    const invocationId = context.request.invocation_id;
    const transient = transientJournal(invocationId ?? context.request.correlation_id);
    const fence = context.options.fence;
    if (invocationId === undefined || fence === undefined) return transient;
    return fencedJournal(transient, fence, deps.worker);
  }

  const honoursKeys = (integration: IntegrationRecord): boolean => deps.idempotentKeys?.(integration) ?? false;

  async function skillTargets(agent: AgentRecord, competencies: CompetencyRecord[]): Promise<ToolTarget[]> {
    if (deps.skillTools === undefined) return [];
    const targets: ToolTarget[] = [];
    for (const id of unique(competencies.flatMap((c) => c.skills))) {
      const skill = await deps.findSkill(id);
      if (skill === null || skill.runtime !== 'starlark') continue;
      for (const binding of deps.skillTools(skill)) {
        const allowed = toolAllowed(agent.allow_skill_tools, skill.id, binding.spec.name);
        targets.push({
          spec: binding.spec,
          provider_id: skill.id,
          native_tool: binding.spec.name,
          state_changing: false,
          honoursKeys: async () => false,
          refusal: allowed ? null : refusal(agent, 'allow_skill_tools', skill.id, binding.spec.name),
          run: async (args, options) => ({ text: await binding.execute(args, options.signal === undefined ? {} : { signal: options.signal }), is_error: false }),
        });
      }
    }
    return targets;
  }

  async function integrationTargets(agent: AgentRecord, competencies: CompetencyRecord[]): Promise<ToolTarget[]> {
    const integrations = deps.integrations;
    if (integrations === undefined) return [];
    const targets: ToolTarget[] = [];
    for (const id of unique(competencies.flatMap((c) => c.integrations))) {
      const live = await integrations.tools(id).catch((err: unknown) => {
        deps.warn({ err, integration_id: id }, 'integration not connected here: its tools are not offered');
        return [];
      });
      // Read only when a state-changing call is made, and then once per invocation.
      let record: Promise<IntegrationRecord | undefined> | undefined;
      const honours = async (): Promise<boolean> => {
        record ??= catalogCollections(deps.store).integrations.get(id).then((found) => found?.doc);
        const integration = await record;
        return integration !== undefined && honoursKeys(integration);
      };
      for (const tool of live) {
        const allowed = toolAllowed(agent.allow_integration_tools, id, tool.name);
        targets.push({
          spec: { name: tool.name, description: tool.description, input_schema: tool.input_schema },
          provider_id: id,
          native_tool: tool.name,
          state_changing: !tool.read_only,
          honoursKeys: honours,
          refusal: allowed ? null : refusal(agent, 'allow_integration_tools', id, tool.name),
          run: (args, options) => integrations.call(id, tool.name, args, options),
        });
      }
    }
    return targets;
  }

  async function contractTargets(competencies: CompetencyRecord[]): Promise<ToolTarget[]> {
    const integrations = deps.integrations;
    if (integrations === undefined) return [];
    const catalog = catalogCollections(deps.store);
    const targets: ToolTarget[] = [];
    for (const name of unique(competencies.flatMap((c) => c.contracts))) {
      const binding = (await contractBindings(deps.store).get(name))?.doc;
      const contract = (await catalog.contracts.get(name))?.doc;
      const integration = binding === undefined ? undefined : (await catalog.integrations.get(binding.integration_id))?.doc;
      const impl = integration?.implements[name];
      if (contract === undefined || integration === undefined || impl === undefined) continue;
      const nativeReadOnly = await readOnlyNativeTools(integrations, integration.id);
      for (const tool of contract.tools) {
        const native = nativeToolName(impl, tool.name);
        targets.push({
          spec: { name: tool.name, description: tool.description ?? `${name}: ${tool.name}`, input_schema: tool.input_schema },
          provider_id: integration.id,
          native_tool: native,
          // Read-only only when both the contract and the native tool say so (docs/tools.md); the
          // contract alone while the integration is not connected here (a call cannot be made then).
          state_changing: tool.read_only !== true || (nativeReadOnly !== null && !nativeReadOnly.has(native)),
          honoursKeys: async () => honoursKeys(integration),
          refusal: null,
          run: async (args, options) => {
            const answer = await integrations.call(integration.id, native, toNativeArgs(impl, tool.name, args), options);
            return answer.is_error ? answer : { text: toContractResult(impl, tool.name, answer.text), is_error: false };
          },
        });
      }
    }
    return targets;
  }

  return { toolsFor };
}

/** The native tools of a connected integration that only read; null when it is not connected here. */
async function readOnlyNativeTools(integrations: IntegrationTools, id: string): Promise<Set<string> | null> {
  const live = await integrations.tools(id).catch(() => null);
  return live === null ? null : new Set(live.filter((t) => t.read_only).map((t) => t.name));
}

function refusal(agent: AgentRecord, list: string, provider: string, tool: string): string {
  return `agent '${agent.name}' may not use tool '${tool}' of '${provider}': it is not in the agent's ${list} (AGENT.md)`;
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
