import type { PackageProblem } from '@agent-platform/contracts';
import { formatProblem } from './problems.ts';

/**
 * A package the platform refuses, with every problem found. Not a `PlatformError`: this library
 * sits below the domain; callers (catalog install, registry publish) map it to the spec's
 * `ValidationError` and may put `problems` in the error details.
 */
export class PackageError extends Error {
  readonly category = 'ValidationError' as const;
  readonly problems: PackageProblem[];

  constructor(heading: string, problems: PackageProblem[]) {
    super([heading, ...problems.map((problem) => `  - ${formatProblem(problem)}`)].join('\n'));
    this.name = 'PackageError';
    this.problems = problems;
  }
}
