import type { StepAgent, StepErrorMode, StepMode, WorkflowStep } from '@agent-platform/contracts';
import { checkKeys, describeValue, isTable, pathOf, readString, typeProblem, type Table } from '../fields.ts';
import type { FileProblems } from '../problems.ts';

export const DEFAULT_TIMEOUT_SECS = 30;
const STEP_KEYS = [
  'name',
  'agent',
  'prompt_template',
  'prompt',
  'mode',
  'timeout_secs',
  'timeout_seconds',
  'error_mode',
  'output_var',
];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const STRING_MODES: Record<string, StepMode> = {
  sequential: 'Sequential',
  fanout: 'FanOut',
  fan_out: 'FanOut',
  collect: 'Collect',
};

/**
 * The one place where the tolerated spellings of a workflow step become the canonical
 * `WorkflowStep` (spec §Resources "WorkflowDefinition", DECISIONS D8):
 * - `prompt` for `prompt_template` and `timeout_seconds` for `timeout_secs`; the canonical key
 *   wins when both appear (the alias is then reported as a warning);
 * - `mode` and `error_mode` strings and object keys matched case-insensitively, `fan_out` and
 *   `fanout` for `FanOut`; `Conditional` and `Loop` only as objects with their parameters;
 * - `agent` as `{ByName}`, `{ById}`, or a plain string meaning `{ByName: <string>}`.
 * Defaults: mode `Sequential`, `timeout_secs` 30, `error_mode` `Fail`, `prompt_template`
 * `{{input}}` (the step passes its input to the agent unchanged).
 */
export function normalizeStep(p: FileProblems, input: unknown, at: string): WorkflowStep | undefined {
  if (!isTable(input)) {
    typeProblem(p, at, 'a step object', input);
    return undefined;
  }
  checkKeys(p, input, STEP_KEYS, at);
  const name = readString(p, input, 'name', at, { required: true, nonBlank: true });
  const agent = normalizeAgent(p, input.agent, pathOf(at, 'agent'));
  const prompt = aliased(p, input, 'prompt_template', 'prompt', at);
  const timeout = aliased(p, input, 'timeout_secs', 'timeout_seconds', at);
  const mode = input.mode === undefined ? 'Sequential' : normalizeMode(p, input.mode, pathOf(at, 'mode'));
  const errorMode =
    input.error_mode === undefined
      ? 'Fail'
      : normalizeErrorMode(p, input.error_mode, pathOf(at, 'error_mode'));
  const outputVar = readString(p, input, 'output_var', at);
  const outputVarOk = outputVar === undefined || checkVariableName(p, outputVar, pathOf(at, 'output_var'));

  let promptTemplate: string | undefined = '{{input}}';
  if (prompt !== undefined && typeof prompt.value === 'string') promptTemplate = prompt.value;
  else if (prompt !== undefined) {
    typeProblem(p, prompt.field, 'a string', prompt.value);
    promptTemplate = undefined;
  }
  const timeoutSecs =
    timeout === undefined ? DEFAULT_TIMEOUT_SECS : positiveInteger(p, timeout.value, timeout.field);

  if (name === undefined || agent === undefined || promptTemplate === undefined || mode === undefined)
    return undefined;
  if (errorMode === undefined || timeoutSecs === undefined || !outputVarOk) return undefined;
  const step: WorkflowStep = {
    name,
    agent,
    prompt_template: promptTemplate,
    mode,
    timeout_secs: timeoutSecs,
    error_mode: errorMode,
  };
  if (outputVar !== undefined) step.output_var = outputVar;
  return step;
}

/** The canonical key's value when present, else the alias's; a present-but-ignored alias is a warning. */
function aliased(
  p: FileProblems,
  table: Table,
  canonical: string,
  alias: string,
  at: string,
): { value: unknown; field: string } | undefined {
  if (table[canonical] !== undefined) {
    if (table[alias] !== undefined)
      p.warn(pathOf(at, alias), 'alias-ignored', `${alias} is ignored: ${canonical} is also set and wins`);
    return { value: table[canonical], field: pathOf(at, canonical) };
  }
  return table[alias] === undefined ? undefined : { value: table[alias], field: pathOf(at, alias) };
}

function normalizeAgent(p: FileProblems, value: unknown, field: string): StepAgent | undefined {
  if (value === undefined) {
    p.add(field, 'required', 'required key is missing');
    return undefined;
  }
  if (typeof value === 'string' && value.trim() !== '') return { ByName: value };
  const [tag, ref] =
    isTable(value) && Object.keys(value).length === 1 ? (Object.entries(value)[0] ?? []) : [];
  if (tag === 'ByName' && typeof ref === 'string' && ref.trim() !== '') return { ByName: ref };
  if (tag === 'ById' && typeof ref === 'string' && UUID.test(ref)) return { ById: ref.toLowerCase() };
  const detail = tag === 'ById' ? ': ById must be a UUID' : ` (got ${describeValue(value)})`;
  p.add(
    field,
    'step-agent',
    `must be {"ByName": "<agent name>"}, {"ById": "<uuid>"} or an agent name${detail}`,
  );
  return undefined;
}

function normalizeMode(p: FileProblems, value: unknown, field: string): StepMode | undefined {
  if (typeof value === 'string') {
    const mode = STRING_MODES[value.toLowerCase()];
    if (mode !== undefined) return mode;
    const lower = value.toLowerCase();
    if (lower === 'conditional' || lower === 'loop') {
      const example =
        lower === 'loop'
          ? '{"Loop": {"until": "DONE", "max_iterations": 3}}'
          : '{"Conditional": {"condition": "APPROVED"}}';
      p.add(field, 'mode-needs-parameters', `${value} carries parameters, so it is an object: ${example}`);
      return undefined;
    }
    p.add(
      field,
      'step-mode',
      `must be Sequential, FanOut, Collect, {"Conditional": {...}} or {"Loop": {...}} (got ${JSON.stringify(value.slice(0, 40))})`,
    );
    return undefined;
  }
  const [tag, params] =
    isTable(value) && Object.keys(value).length === 1 ? (Object.entries(value)[0] ?? []) : [];
  const kind = tag?.toLowerCase();
  if ((kind !== 'conditional' && kind !== 'loop') || !isTable(params)) {
    p.add(
      field,
      'step-mode',
      'must be a mode string, or an object with exactly one key Conditional or Loop holding its parameters',
    );
    return undefined;
  }
  const at = pathOf(field, tag as string);
  if (kind === 'conditional') {
    checkKeys(p, params, ['condition'], at);
    const condition = readString(p, params, 'condition', at, { required: true, nonBlank: true });
    return condition === undefined ? undefined : { Conditional: { condition } };
  }
  checkKeys(p, params, ['until', 'max_iterations'], at);
  const until = readString(p, params, 'until', at, { required: true, nonBlank: true });
  let max: number | undefined;
  if (params.max_iterations === undefined)
    p.add(pathOf(at, 'max_iterations'), 'required', 'required key is missing');
  else max = positiveInteger(p, params.max_iterations, pathOf(at, 'max_iterations'));
  return until === undefined || max === undefined ? undefined : { Loop: { until, max_iterations: max } };
}

function normalizeErrorMode(p: FileProblems, value: unknown, field: string): StepErrorMode | undefined {
  if (typeof value === 'string') {
    const lower = value.toLowerCase();
    if (lower === 'fail') return 'Fail';
    if (lower === 'skip') return 'Skip';
    const hint =
      lower === 'retry'
        ? ': Retry is an object, {"Retry": {"max_retries": 3}}'
        : ` (got ${JSON.stringify(value.slice(0, 40))})`;
    p.add(field, 'step-error-mode', `must be Fail, Skip or {"Retry": {"max_retries": <n>}}${hint}`);
    return undefined;
  }
  const [tag, params] =
    isTable(value) && Object.keys(value).length === 1 ? (Object.entries(value)[0] ?? []) : [];
  if (tag?.toLowerCase() !== 'retry' || !isTable(params)) {
    p.add(field, 'step-error-mode', 'must be Fail, Skip or {"Retry": {"max_retries": <n>}}');
    return undefined;
  }
  const at = pathOf(field, tag);
  checkKeys(p, params, ['max_retries'], at);
  if (params.max_retries === undefined) {
    p.add(pathOf(at, 'max_retries'), 'required', 'required key is missing');
    return undefined;
  }
  const max = positiveInteger(p, params.max_retries, pathOf(at, 'max_retries'));
  return max === undefined ? undefined : { Retry: { max_retries: max } };
}

function positiveInteger(p: FileProblems, value: unknown, field: string): number | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return value;
  p.add(
    field,
    'positive-integer',
    `must be a positive integer (got ${typeof value === 'number' ? value : describeValue(value)})`,
  );
  return undefined;
}

/** A variable name for `{{name}}`: an identifier other than the reserved `input`. */
export function checkVariableName(p: FileProblems, name: string, field: string): boolean {
  if (!IDENTIFIER.test(name)) {
    p.add(
      field,
      'identifier',
      `must be an identifier (letters, digits and _, not starting with a digit), got ${JSON.stringify(name.slice(0, 40))}`,
    );
    return false;
  }
  if (name === 'input') {
    p.add(field, 'reserved-variable', '{{input}} is reserved for the step input');
    return false;
  }
  return true;
}
