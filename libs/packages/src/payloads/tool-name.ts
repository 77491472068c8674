import type { FileProblems } from '../problems.ts';

/** The function-name rule of OpenAI-style tool calling, so that every tool can be offered to any provider. */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** Reports a `tool-name` problem unless `name` is 1-64 letters, digits, `_` or `-`. */
export function checkToolName(p: FileProblems, name: string, field: string): boolean {
  if (TOOL_NAME.test(name)) return true;
  p.add(
    field,
    'tool-name',
    `must be 1-64 letters, digits, _ or - (got ${JSON.stringify(name.slice(0, 40))})`,
  );
  return false;
}
