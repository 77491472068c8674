/**
 * What a Starlark run answers: the domain's `StarlarkRunner` port
 * (libs/domain/src/skills/starlark-runner.ts, where each failure kind is described), which this
 * adapter implements. Type-only, so the interpreter worker loads nothing of the domain.
 */
import type { StarlarkModuleInfo } from '@agent-platform/domain';

export type {
  StarlarkFailure,
  StarlarkFailureKind,
  StarlarkLimits,
  StarlarkModuleInfo,
  StarlarkOutcome,
  StarlarkRunner,
} from '@agent-platform/domain';

/** A top-level `def` of a module; `params` is -1 when it takes `*args` or `**kwargs`. */
export type StarlarkFunction = StarlarkModuleInfo['functions'][number];
