import { systemClock, type Clock } from '../time/clock.ts';
import type { ChatMessage, CompletionRequest, ModelProvider, RequestedToolCall, TokenUsage, ToolSpec } from './model-provider.ts';

/** A tool the model may call, and the skill that provides it (AgentResponse `skill_id`). */
export interface ToolBinding {
  skill_id: string;
  spec: ToolSpec;
  /**
   * Returns the text handed back to the model. A throw is reported to the model, not raised,
   * except a `ToolLoopHalt`, which stops the whole loop with its reason.
   */
  execute(args: Record<string, unknown>, options: { signal?: AbortSignal }): Promise<string>;
  /**
   * Not offered to the model, yet known by name: a tool the agent may not use (its `execute`
   * refuses with PermissionDenied), so a call to it is reported as refused rather than unknown.
   */
  hidden?: boolean;
}

/**
 * Thrown by a tool to stop the loop instead of telling the model the call failed: a
 * state-changing call whose outcome is in doubt (docs/tools.md "The tool-call journal"), where a
 * model that tried again would write a second time. The loop rejects with `reason`.
 */
export class ToolLoopHalt extends Error {
  constructor(readonly reason: unknown) {
    super(reason instanceof Error ? reason.message : String(reason));
    this.name = 'ToolLoopHalt';
  }
}

/** One executed (or refused) tool call, as spec §Resources AgentResponse `tool_calls` shows it. */
export interface ToolCallSummary {
  tool_name: string;
  skill_id: string;
  duration_ms: number;
  success: boolean;
}

export interface ToolLoopOptions {
  provider: ModelProvider;
  /** The conversation so far; its `tools` are replaced by the specs of `tools`. */
  request: CompletionRequest;
  tools?: readonly ToolBinding[];
  /** Most model calls made; default 8. */
  maxRounds?: number;
  signal?: AbortSignal;
  /** Receives the streamed text of every round, including text a model writes before calling tools. */
  onToken?: (text: string) => void;
  clock?: Clock;
}

export interface ToolLoopResult {
  /** The last reply's text (see `stop_reason` for the case where the model never finished). */
  content: string;
  tool_calls: ToolCallSummary[];
  /** input + output tokens over every round: what the call cost. */
  tokens_used: number;
  usage: TokenUsage;
  /** Model calls made. */
  rounds: number;
  /**
   * `complete`: the last reply asked for no tools. `max_rounds`: the model still asked for tools
   * on its last allowed call; those calls were not run.
   */
  stop_reason: 'complete' | 'max_rounds';
  /** The conversation including every assistant and tool message of the loop. */
  messages: ChatMessage[];
}

export const DEFAULT_MAX_ROUNDS = 8;

/**
 * Calls the model, runs the tools it asks for (in the order asked, one at a time, since tools may
 * have side effects), feeds their results back and repeats until a reply asks for no tool, or
 * `maxRounds` model calls were made.
 *
 * Running out of rounds returns instead of throwing: the tools that ran had effects and the tokens
 * were spent, and a caller must still record both (usage, budgets, the AgentResponse). The content
 * is then the last reply's text, or a note saying the loop stopped when that text is empty.
 * Provider errors (ProviderError, Timeout) and aborts propagate unchanged.
 */
export async function runToolLoop(options: ToolLoopOptions): Promise<ToolLoopResult> {
  const { provider, signal, onToken } = options;
  const maxRounds = options.maxRounds ?? DEFAULT_MAX_ROUNDS;
  if (!Number.isInteger(maxRounds) || maxRounds < 1) throw new RangeError(`maxRounds must be a positive integer (got ${maxRounds})`);
  const clock = options.clock ?? systemClock;
  const bindings = indexTools(options.tools ?? []);
  const specs = [...bindings.values()].filter((b) => b.hidden !== true).map((b) => b.spec);
  const messages = [...options.request.messages];
  const summaries: ToolCallSummary[] = [];
  const usage: TokenUsage = { input_tokens: 0, output_tokens: 0 };

  for (let round = 1; ; round += 1) {
    signal?.throwIfAborted();
    const { tools: _ignored, ...base } = options.request;
    const reply = await provider.complete(
      { ...base, messages: [...messages], ...(specs.length > 0 ? { tools: specs } : {}) },
      { ...(signal ? { signal } : {}), ...(onToken ? { onToken } : {}) },
    );
    usage.input_tokens += reply.usage.input_tokens;
    usage.output_tokens += reply.usage.output_tokens;
    const done = (stop_reason: ToolLoopResult['stop_reason'], content: string): ToolLoopResult => ({
      content,
      tool_calls: summaries,
      tokens_used: usage.input_tokens + usage.output_tokens,
      usage,
      rounds: round,
      stop_reason,
      messages,
    });
    if (reply.tool_calls.length === 0) {
      messages.push({ role: 'assistant', content: reply.content });
      return done('complete', reply.content);
    }
    messages.push({ role: 'assistant', content: reply.content, tool_calls: reply.tool_calls });
    if (round >= maxRounds) {
      const note = `[stopped after ${maxRounds} model calls: the model was still asking for tools]`;
      return done('max_rounds', reply.content.trim() === '' ? note : reply.content);
    }
    for (const call of reply.tool_calls) {
      const { summary, output } = await runOne(call, bindings, clock, signal);
      summaries.push(summary);
      messages.push({ role: 'tool', tool_call_id: call.id, content: output });
    }
  }
}

function indexTools(tools: readonly ToolBinding[]): Map<string, ToolBinding> {
  const byName = new Map<string, ToolBinding>();
  for (const tool of tools) {
    if (byName.has(tool.spec.name)) throw new Error(`two tools are named '${tool.spec.name}'`);
    byName.set(tool.spec.name, tool);
  }
  return byName;
}

async function runOne(
  call: RequestedToolCall,
  bindings: Map<string, ToolBinding>,
  clock: Clock,
  signal: AbortSignal | undefined,
): Promise<{ summary: ToolCallSummary; output: string }> {
  const binding = bindings.get(call.name);
  const started = clock.now().getTime();
  const finish = (success: boolean, output: string) => ({
    summary: {
      tool_name: call.name,
      skill_id: binding?.skill_id ?? '',
      duration_ms: Math.max(0, Math.round(clock.now().getTime() - started)),
      success,
    },
    output,
  });
  if (binding === undefined) {
    const known = [...bindings.values()].filter((b) => b.hidden !== true).map((b) => b.spec.name).join(', ') || 'none';
    return finish(false, `error: unknown tool '${call.name}'; available tools: ${known}`);
  }
  const args = parseArguments(call.arguments);
  if (args === null) return finish(false, `error: the arguments of '${call.name}' are not a JSON object`);
  try {
    return finish(true, await binding.execute(args, signal ? { signal } : {}));
  } catch (error) {
    // An abort is the caller's decision, not a tool failure to show the model.
    signal?.throwIfAborted();
    if (error instanceof ToolLoopHalt) throw error.reason;
    const message = error instanceof Error ? error.message : String(error);
    return finish(false, `error: tool '${call.name}' failed: ${message}`);
  }
}

/** Models send `""` for a tool without parameters; anything else must be a JSON object. */
function parseArguments(text: string): Record<string, unknown> | null {
  if (text.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
