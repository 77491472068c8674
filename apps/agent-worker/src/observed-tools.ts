import type { AgentToolsProvider, ToolBinding } from '@agent-platform/domain';
import { inSpan, tracingEnabled, type PlatformInstruments } from '@agent-platform/observability';

/**
 * The tools an invocation's model calls, traced and counted (docs/observability.md): each call
 * is one `execute_tool <name>` span under the invocation's (the tool's name and skill, never its
 * arguments or its result) and one `tool_calls_total{outcome}`. A tool that throws is a failure
 * (the tool loop reports it to the model); the error is left as it was.
 */
export function observeTools(
  provider: AgentToolsProvider,
  instruments: PlatformInstruments | undefined,
): AgentToolsProvider {
  if (!tracingEnabled() && instruments === undefined) return provider;
  return {
    toolsFor: async (agent, context) => {
      const set = await provider.toolsFor(agent, context);
      return { ...set, bindings: set.bindings.map((binding) => observeTool(binding, instruments)) };
    },
  };
}

function observeTool(binding: ToolBinding, instruments: PlatformInstruments | undefined): ToolBinding {
  const attributes = {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': binding.spec.name,
    'tool.skill_id': binding.skill_id,
  };
  return {
    ...binding,
    execute: (args, options) =>
      inSpan(`execute_tool ${binding.spec.name}`, { attributes }, async () => {
        try {
          const output = await binding.execute(args, options);
          instruments?.toolCall('success');
          return output;
        } catch (error) {
          instruments?.toolCall('failure');
          throw error;
        }
      }),
  };
}
