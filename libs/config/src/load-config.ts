import { readFile, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { PlatformConfig } from '@agent-platform/contracts';
import { parse, TomlError } from 'smol-toml';
import { ConfigError } from './config-error.ts';
import { validateConfig } from './validate-config.ts';

/** Where the running config came from (DECISIONS D1). */
export type ConfigSource = 'flag' | 'env' | 'cwd' | 'first-run';

export interface LoadedConfig {
  config: PlatformConfig;
  /** Absolute path of the file, or null when started without one. */
  path: string | null;
  /** The file's text as read, for GET /config (redacted there). */
  rawText: string | null;
  source: ConfigSource;
}

/** A config file to read, or the marker that none exists and the first-run setup applies. */
export type ConfigLocation = { path: string; source: 'flag' | 'env' | 'cwd' } | { path: null; source: 'first-run' };

export interface ConfigLookup {
  argv: readonly string[];
  env: Record<string, string | undefined>;
  cwd: string;
}

export const CONFIG_ENV = 'AP_CONFIG';
export const DEFAULT_CONFIG_FILE = 'agent-platform.toml';

/**
 * Finds the config file: `--config <file>` / `--config=<file>`, else env `AP_CONFIG`, else
 * `./agent-platform.toml`; relative names resolve against `cwd`. A file named by the flag or the
 * variable must exist: falling back to a first-run setup would hide the operator's typo.
 */
export async function locateConfigFile({ argv, env, cwd }: ConfigLookup): Promise<ConfigLocation> {
  const flag = configFlag(argv);
  if (flag !== undefined) return { path: await existingFile(resolve(cwd, flag), '--config'), source: 'flag' };
  const fromEnv = env[CONFIG_ENV];
  if (fromEnv !== undefined && fromEnv !== '') {
    return { path: await existingFile(resolve(cwd, fromEnv), CONFIG_ENV), source: 'env' };
  }
  const local = resolve(cwd, DEFAULT_CONFIG_FILE);
  return (await isFile(local)) ? { path: local, source: 'cwd' } : { path: null, source: 'first-run' };
}

/**
 * Loads and validates the config file found by `locateConfigFile`. With no file at all it throws:
 * only the all-in-one root may create one (`loadOrCreateConfig`).
 */
export async function loadConfig(lookup: ConfigLookup): Promise<LoadedConfig> {
  const location = await locateConfigFile(lookup);
  if (location.path === null) {
    throw new ConfigError([
      `no config file: pass --config <file>, set ${CONFIG_ENV}, or create ./${DEFAULT_CONFIG_FILE} in ${lookup.cwd}`,
    ]);
  }
  return readConfigFile(location.path, location.source);
}

/** Reads, parses and validates one file. */
export async function readConfigFile(path: string, source: ConfigSource): Promise<LoadedConfig> {
  let rawText: string;
  try {
    rawText = await readFile(path, 'utf8');
  } catch (cause) {
    throw new ConfigError([`${path}: cannot be read (${(cause as NodeJS.ErrnoException).code ?? String(cause)})`], { cause });
  }
  return { config: parseConfigText(rawText, path), path, rawText, source };
}

/** Parses TOML text as the file at `path` (relative paths inside resolve against its directory). */
export function parseConfigText(text: string, path: string): PlatformConfig {
  let document: Record<string, unknown>;
  try {
    document = parse(text);
  } catch (cause) {
    if (!(cause instanceof TomlError)) throw cause;
    const reason = (cause.message.split('\n')[0] ?? '').replace(/^Invalid TOML document: /, '');
    throw new ConfigError([`line ${cause.line}, column ${cause.column}: ${reason}`], {
      heading: `Invalid TOML in config file ${path}:`,
      cause,
    });
  }
  return validateConfig(document, { baseDir: dirname(path), source: `file ${path}` });
}

function configFlag(argv: readonly string[]): string | undefined {
  let found: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') break;
    if (arg === '--config') {
      const next = argv[i + 1];
      if (next === undefined || next === '' || next.startsWith('--')) throw new ConfigError(['--config needs a file path']);
      found = next;
      i++;
    } else if (arg?.startsWith('--config=')) {
      found = arg.slice('--config='.length);
      if (found === '') throw new ConfigError(['--config needs a file path']);
    }
  }
  return found;
}

async function existingFile(path: string, origin: string): Promise<string> {
  if (!(await isFile(path))) throw new ConfigError([`config file ${path} (from ${origin}) does not exist or is not a file`]);
  return path;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}
