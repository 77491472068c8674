import { PlatformConfig } from '@agent-platform/contracts';
import { Value } from 'typebox/value';
import { ConfigError } from './config-error.ts';
import { resolveConfigPaths } from './resolve-config-paths.ts';
import { describeSchemaErrors } from './schema-errors.ts';
import { semanticProblems } from './semantic-checks.ts';

/**
 * Fills defaults (a missing table = all its defaults), validates the whole document and resolves
 * relative paths against `baseDir`. Throws one `ConfigError` listing every problem; `source`
 * names the file in its heading.
 */
export function validateConfig(document: Record<string, unknown>, options: { baseDir: string; source: string }): PlatformConfig {
  const filled = Value.Default(PlatformConfig, Value.Clone(document)) as Record<string, unknown>;
  const problems = [...describeSchemaErrors(PlatformConfig, filled), ...semanticProblems(filled)];
  if (problems.length === 0 && Value.Check(PlatformConfig, filled)) return resolveConfigPaths(filled, options.baseDir);
  if (problems.length === 0) problems.push('(file): does not match the config schema');
  throw new ConfigError(problems, { heading: `Invalid config ${options.source} (${countOf(problems)}):` });
}

/** The config of an empty file: every default, paths left as written (relative). */
export function defaultConfig(): PlatformConfig {
  return Value.Default(PlatformConfig, {}) as PlatformConfig;
}

function countOf(problems: string[]): string {
  return problems.length === 1 ? '1 problem' : `${problems.length} problems`;
}
