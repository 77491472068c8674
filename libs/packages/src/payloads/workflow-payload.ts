import type { WorkflowStep, WorkflowTemplatePayload } from '@agent-platform/contracts';
import { checkKeys, pathOf, readArray, readString, readStringTable, type Table } from '../fields.ts';
import { countingProblems, type FileProblems } from '../problems.ts';
import { checkVariableName, normalizeStep } from './normalize-step.ts';
import { readPackageNames } from './package-refs.ts';
import { decodeText, parseJsonObject } from './payload-text.ts';

const KEYS = ['description', 'agents_required', 'steps', 'variables', 'workflow_type'] as const;
const FORBIDDEN = { name: 'a workflow takes its name from package.toml (package.name)' };
const PLACEHOLDER = /\{\{\s*([^{}\s]+)\s*\}\}/g;

/** workflow.json: description, the agent templates it needs, its steps (normalized) and seed variables. */
export function checkWorkflowPayload(
  bytes: Uint8Array,
  problems: FileProblems,
): WorkflowTemplatePayload | undefined {
  const p = countingProblems(problems);
  const text = decodeText(bytes, p);
  const data = text === undefined ? undefined : parseJsonObject(text, p);
  if (data === undefined) return undefined;
  checkKeys(p, data, KEYS, '', FORBIDDEN);
  const payload: WorkflowTemplatePayload = {
    description: readString(p, data, 'description', '', { required: true, nonBlank: true }) ?? '',
    agents_required: readPackageNames(p, data, 'agents_required'),
    steps: checkSteps(p, data),
    variables: checkVariables(p, data),
  };
  const workflowType = readString(p, data, 'workflow_type', '', { nonBlank: true });
  if (workflowType !== undefined) payload.workflow_type = workflowType;
  warnUndefinedVariables(p, payload);
  warnAgentsNotRequired(p, payload);
  return p.count() === 0 ? payload : undefined;
}

function checkSteps(p: FileProblems, data: Table): WorkflowStep[] {
  const items = readArray(p, data, 'steps', '', { required: true });
  if (items === undefined) return [];
  if (items.length === 0) p.add('steps', 'min-items', 'a workflow needs at least one step');
  const byIndex: (WorkflowStep | undefined)[] = [];
  const names = new Set<string>();
  items.forEach((item, i) => {
    const at = pathOf('steps', i);
    const step = normalizeStep(p, item, at);
    byIndex.push(step);
    if (step === undefined) return;
    if (names.has(step.name))
      p.add(pathOf(at, 'name'), 'duplicate-step-name', `step name '${step.name}' is used more than once`);
    names.add(step.name);
    // D8: Collect waits for the FanOut group right before it; without one it has nothing to collect.
    // A previous step that is itself invalid was reported already and is not judged again.
    const previousInvalid = i > 0 && byIndex[i - 1] === undefined;
    if (step.mode === 'Collect' && !previousInvalid && byIndex[i - 1]?.mode !== 'FanOut') {
      p.add(
        pathOf(at, 'mode'),
        'collect-without-fanout',
        'a Collect step must directly follow a FanOut step',
      );
    }
  });
  return byIndex.filter((step) => step !== undefined);
}

function checkVariables(p: FileProblems, data: Table): Record<string, string> {
  const variables = readStringTable(p, data, 'variables', '');
  for (const name of Object.keys(variables)) {
    if (!checkVariableName(p, name, pathOf('variables', name))) delete variables[name];
  }
  return variables;
}

/** A `{{name}}` that nothing sets renders as written; usually a typo, so a warning. */
function warnUndefinedVariables(p: FileProblems, payload: WorkflowTemplatePayload): void {
  const known = new Set(['input', ...Object.keys(payload.variables)]);
  payload.steps.forEach((step, i) => {
    for (const [, name] of step.prompt_template.matchAll(PLACEHOLDER)) {
      if (name !== undefined && !known.has(name)) {
        p.warn(
          pathOf(pathOf('steps', i), 'prompt_template'),
          'undefined-variable',
          `{{${name}}} is set by no earlier step's output_var and no variables entry`,
        );
      }
    }
    if (step.output_var !== undefined) known.add(step.output_var);
  });
}

/** A step may call an agent that already exists on the platform, so a name missing from agents_required is a warning. */
function warnAgentsNotRequired(p: FileProblems, payload: WorkflowTemplatePayload): void {
  payload.steps.forEach((step, i) => {
    if ('ByName' in step.agent && !payload.agents_required.includes(step.agent.ByName)) {
      p.warn(
        pathOf(pathOf('steps', i), 'agent'),
        'agent-not-required',
        `agent '${step.agent.ByName}' is not in agents_required: it must already exist where the workflow is installed`,
      );
    }
  });
}
