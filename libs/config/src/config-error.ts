/**
 * A configuration the platform refuses: a bad file, a bad key, a bad vault key. `problems` holds
 * one line per fault, each naming what is wrong (a dotted key path, a file, an environment
 * variable) so that an operator fixes everything in one pass instead of one error per boot.
 *
 * Deliberately not a `PlatformError`: config sits below the domain. The api maps it by
 * `category`, the spec's route-local `ConfigError` string.
 */
export class ConfigError extends Error {
  readonly category = 'ConfigError' as const;
  readonly problems: string[];

  constructor(problems: string[], options: { heading?: string; cause?: unknown } = {}) {
    super(formatMessage(problems, options.heading), options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

function formatMessage(problems: string[], heading: string | undefined): string {
  if (heading === undefined) return problems.join('\n');
  return [heading, ...problems.map((p) => `  - ${p}`)].join('\n');
}
