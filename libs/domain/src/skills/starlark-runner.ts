import type { PlatformConfig } from '@agent-platform/contracts';

/**
 * The port through which the domain runs Starlark (docs/skills.md). The adapter is
 * `@agent-platform/starlark` (the official Go interpreter built to WebAssembly, in worker
 * threads); the apps' compose.ts files pass it in, or null on a machine that has not built it.
 * The domain never imports the adapter.
 */

/**
 * Why a run failed: `syntax` (does not parse, or names something undefined such as `open`),
 * `runtime` (a Starlark error, `load()`, recursion), `step_limit`, `timeout` (wall time),
 * `not_found` (no such function), `bad_args`, `result` (no JSON form), `aborted`, `crashed`.
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
  /** 1-based line in the Starlark source, when known. */
  line?: number;
  column?: number;
  backtrace?: string;
}

export type StarlarkOutcome<T> = { ok: true; value: T } | { ok: false; error: StarlarkFailure };

export interface StarlarkLimits {
  /** Interpreter steps one run may take: stops a runaway loop inside the interpreter. */
  maxSteps: number;
  /** Wall time one run may take; past it the run is stopped from outside. */
  timeoutMs: number;
}

/** Defaults of `[skills] starlark_max_steps` and `starlark_timeout_ms`. */
export const DEFAULT_STARLARK_LIMITS: StarlarkLimits = { maxSteps: 1_000_000, timeoutMs: 2_000 };

/** The limits `[skills]` sets. */
export function starlarkLimitsOf(skills: PlatformConfig['skills']): StarlarkLimits {
  return { maxSteps: skills.starlark_max_steps, timeoutMs: skills.starlark_timeout_ms };
}

export interface StarlarkModuleInfo {
  /** Top-level `def`s; `params` is -1 for a function taking `*args` or `**kwargs`. */
  functions: Array<{ name: string; params: number }>;
}

export interface StarlarkRunner {
  /** Parses the module and runs its top level; lists its top-level functions. */
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

/** One line for a failure, naming the file and line: `tools.star:3: undefined: open`. */
export function describeStarlarkFailure(filename: string, error: StarlarkFailure): string {
  const at = error.line === undefined ? filename : `${filename}:${error.line}`;
  return `${at}: ${error.message}`;
}
