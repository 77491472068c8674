import { Type, type Static } from 'typebox';

/**
 * One step of a WorkflowDefinition (spec §Resources "WorkflowDefinition", DECISIONS D8), in its
 * canonical spelling: what a workflow package's `steps` normalize to and what the HTTP api
 * returns. Tolerated input spellings (`prompt`, `timeout_seconds`, `fan_out`, lower-case modes,
 * a plain-string agent) are accepted only by `normalizeStep` in `@agent-platform/packages`.
 */

/** The agent a step calls: by the agent's name or by its id. */
export const StepAgent = Type.Union([
  Type.Object({ ByName: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
  Type.Object({ ById: Type.String({ format: 'uuid' }) }, { additionalProperties: false }),
]);
export type StepAgent = Static<typeof StepAgent>;

/** Runs only when the previous output contains `condition` (case-insensitive). */
export const ConditionalMode = Type.Object(
  { Conditional: Type.Object({ condition: Type.String({ minLength: 1 }) }, { additionalProperties: false }) },
  { additionalProperties: false },
);
export type ConditionalMode = Static<typeof ConditionalMode>;

/** Repeats until the output contains `until` (case-insensitive) or `max_iterations` runs were made. */
export const LoopMode = Type.Object(
  {
    Loop: Type.Object(
      { until: Type.String({ minLength: 1 }), max_iterations: Type.Integer({ minimum: 1 }) },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type LoopMode = Static<typeof LoopMode>;

/** `Conditional` and `Loop` carry parameters, so they are objects; a bare string is refused (D8). */
export const StepMode = Type.Union([
  Type.Literal('Sequential'),
  Type.Literal('FanOut'),
  Type.Literal('Collect'),
  ConditionalMode,
  LoopMode,
]);
export type StepMode = Static<typeof StepMode>;

export const RetryErrorMode = Type.Object(
  { Retry: Type.Object({ max_retries: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }) },
  { additionalProperties: false },
);
export type RetryErrorMode = Static<typeof RetryErrorMode>;

/** `Fail` aborts the run, `Skip` continues with the next step, `Retry` retries then fails. */
export const StepErrorMode = Type.Union([Type.Literal('Fail'), Type.Literal('Skip'), RetryErrorMode]);
export type StepErrorMode = Static<typeof StepErrorMode>;

export const WorkflowStep = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    agent: StepAgent,
    /** `{{input}}` and `{{var_name}}` are substituted; defaults to `{{input}}` in a package. */
    prompt_template: Type.String(),
    mode: StepMode,
    timeout_secs: Type.Integer({ minimum: 1, default: 30 }),
    error_mode: StepErrorMode,
    output_var: Type.Optional(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$' })),
  },
  { additionalProperties: false },
);
export type WorkflowStep = Static<typeof WorkflowStep>;
