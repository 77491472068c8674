/**
 * What a Starlark run answers. These shapes are the `StarlarkRunner` port of the domain
 * (libs/domain/src/skills/starlark-runner.ts), repeated here so that this adapter needs nothing
 * from the domain; the compiler checks they stay the same where the apps compose the two.
 */

/**
 * Why a run failed:
 * - `syntax`: the source does not parse or names something undefined (`open`, `time`, ...).
 * - `runtime`: a Starlark error while running (`fail()`, a type error, `load()`, recursion).
 * - `step_limit`: the step limit was reached (a runaway loop).
 * - `timeout`: the wall-time limit passed; the worker running it was terminated.
 * - `not_found`: the module defines no function of that name.
 * - `bad_args`: the arguments were not a JSON text.
 * - `result`: the function returned a value with no JSON form (a function, a set, ...).
 * - `aborted`: the caller's signal fired.
 * - `crashed`: the interpreter itself failed (out of memory, a broken build).
 */
export type StarlarkFailureKind =
  | 'syntax'
  | 'runtime'
  | 'step_limit'
  | 'timeout'
  | 'not_found'
  | 'bad_args'
  | 'result'
  | 'aborted'
  | 'crashed';

export interface StarlarkFailure {
  kind: StarlarkFailureKind;
  message: string;
  /** 1-based line in the source, when the interpreter knows it. */
  line?: number;
  column?: number;
  /** The Starlark call stack of a runtime error. */
  backtrace?: string;
}

export type StarlarkOutcome<T> = { ok: true; value: T } | { ok: false; error: StarlarkFailure };

export interface StarlarkLimits {
  /** Interpreter steps (roughly bytecode instructions) one run may take. */
  maxSteps: number;
  /** Wall time one run may take, from the moment a worker starts it. */
  timeoutMs: number;
}

/** A top-level `def` of a module; `params` is -1 when it takes `*args` or `**kwargs`. */
export interface StarlarkFunction {
  name: string;
  params: number;
}

export interface StarlarkModuleInfo {
  functions: StarlarkFunction[];
}

export interface StarlarkRunner {
  /** Parses and runs the module's top level; lists its top-level functions. */
  check(source: string, filename: string, limits: StarlarkLimits): Promise<StarlarkOutcome<StarlarkModuleInfo>>;
  /** Runs the module, then `fn(json.decode(argsJson))`; the value is the result as JSON text. */
  call(
    source: string,
    filename: string,
    fn: string,
    argsJson: string,
    limits: StarlarkLimits & { signal?: AbortSignal },
  ): Promise<StarlarkOutcome<string>>;
}
