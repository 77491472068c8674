import type { StepResultView, WorkflowStep } from '@agent-platform/contracts';
import type { PendingStep, RunProgress } from '../run-record.ts';

/**
 * What each step mode does (DECISIONS D8), as pure functions of the run's progress; the planner
 * (run-planner.ts) calls them. "Contains" is always case-insensitive.
 */

export function contains(text: string, needle: string): boolean {
  return text.toLowerCase().includes(needle.toLowerCase());
}

/** Conditional: runs only if the previous output (the step's `{{input}}`) contains `condition`. */
export function conditionHolds(step: WorkflowStep, input: string): boolean {
  return typeof step.mode === 'object' && 'Conditional' in step.mode ? contains(input, step.mode.Conditional.condition) : true;
}

/** Sequential and Conditional: the output becomes the next `{{input}}`; the run moves past the step. */
export function finishSimple(progress: RunProgress, results: StepResultView[], step: WorkflowStep, index: number, result: StepResultView): void {
  results.push(result);
  setVar(progress, step, result.output);
  progress.input = result.output;
  progress.cursor = index + 1;
}

/**
 * Loop: the step runs again with its own output as `{{input}}` until the output contains `until`
 * or `max_iterations` runs were made; the last output passes on. Each iteration is a step result.
 * Returns the next iteration's input, or null when the loop is over.
 */
export function finishLoopIteration(
  progress: RunProgress,
  results: StepResultView[],
  step: WorkflowStep,
  entry: Pick<PendingStep, 'index' | 'iteration'>,
  result: StepResultView,
): string | null {
  results.push(result);
  if (typeof step.mode !== 'object' || !('Loop' in step.mode)) throw new TypeError(`step ${step.name} is not a Loop`);
  const { until, max_iterations } = step.mode.Loop;
  if (!contains(result.output, until) && entry.iteration + 1 < max_iterations) return result.output;
  setVar(progress, step, result.output);
  progress.input = result.output;
  progress.cursor = entry.index + 1;
  return null;
}

/** The last index of the run of consecutive FanOut steps starting at `start`. */
export function fanOutEnd(steps: readonly WorkflowStep[], start: number): number {
  let end = start;
  while (steps[end + 1]?.mode === 'FanOut') end += 1;
  return end;
}

/** Collect: the group's outputs in step order joined with this separator (D8). */
export const COLLECT_SEPARATOR = '\n\n---\n\n';

/**
 * A FanOut group whose members have all settled: their results enter `step_results` in step
 * order (not completion order, so a run's record does not depend on which worker was faster),
 * their `output_var`s are set in that order, and a Collect step right after it joins the outputs
 * without calling its agent. With no Collect, the next `{{input}}` is the last member's output in
 * step order (the "previous step's output"). Skipped members give nothing; a group that gave
 * nothing passes its input through, like a skipped step.
 */
export function finishFanOut(
  progress: RunProgress,
  results: StepResultView[],
  steps: readonly WorkflowStep[],
  settled: Record<string, StepResultView | null>,
  group: { start: number; end: number },
  collectAgent: (step: WorkflowStep) => { agent_id: string; agent_name: string },
): void {
  const outputs: string[] = [];
  for (let index = group.start; index <= group.end; index++) {
    const result = settled[String(index)] ?? null;
    if (result === null) continue;
    results.push(result);
    setVar(progress, steps[index]!, result.output);
    outputs.push(result.output);
  }
  const next = steps[group.end + 1];
  if (next?.mode === 'Collect') {
    const joined = outputs.join(COLLECT_SEPARATOR);
    results.push({ step_name: next.name, ...collectAgent(next), output: joined, tokens_used: 0, duration_ms: 0 });
    setVar(progress, next, joined);
    progress.input = joined;
    progress.cursor = group.end + 2;
  } else {
    if (outputs.length > 0) progress.input = outputs.at(-1)!;
    progress.cursor = group.end + 1;
  }
  progress.group = null;
}

function setVar(progress: RunProgress, step: WorkflowStep, output: string): void {
  if (step.output_var !== undefined) progress.variables[step.output_var] = output;
}
