import type { FakeTextReply, FakeToolCallReply } from '@agent-platform/testkit';

// What the model stand-in (bench/servers/model-stand-in.ts) does with a user message that asks
// it for a tool: the tool-call journal targets (docs/performance.md "Tool-call journal (issue
// 20)") need a model whose first reply asks for exactly one tool and whose second reply answers,
// so that the only difference between two invocations is the kind of tool called.

/** One chat message as the OpenAI protocol carries it (only what the stand-in reads). */
export interface ChatMessage {
  role: string;
  content?: string | null;
}

/** `call <tool> <JSON object>` at the end of the message. */
const CALL = /\bcall ([A-Za-z0-9_-]+) (\{.*\})\s*$/s;

/** A user message that makes the stand-in call `tool` with `args` once and then answer. */
export function callToolMessage(tag: string, tool: string, args: Record<string, unknown>): string {
  return `${tag}: call ${tool} ${JSON.stringify(args)}`;
}

/** The text the stand-in answers with once `tool` answered `result`: what a target checks. */
export function toolAnswer(tool: string, result: string): string {
  return `${tool} said: ${result}`;
}

/**
 * The stand-in's reply when the LAST user message was written by `callToolMessage`: the tool call
 * while no tool result follows that message, then the answer quoting the result. Null for any
 * other message (the stand-in echoes it). Earlier turns (an agent's session history) are ignored.
 */
export function toolModelReply(messages: readonly ChatMessage[]): FakeToolCallReply | FakeTextReply | null {
  const lastUser = messages.map((m) => m.role).lastIndexOf('user');
  if (lastUser < 0) return null;
  const asked = CALL.exec(messages[lastUser]?.content ?? '');
  if (asked === null) return null;
  const [, tool, args] = asked as unknown as [string, string, string];
  const results = messages.slice(lastUser + 1).filter((m) => m.role === 'tool');
  if (results.length === 0) return { tool_calls: [{ name: tool, arguments: JSON.parse(args) as unknown }] };
  return { text: toolAnswer(tool, results.map((m) => m.content ?? '').join(' | ')) };
}
