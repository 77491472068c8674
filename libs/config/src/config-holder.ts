import type { PlatformConfig } from '@agent-platform/contracts';
import { ConfigError } from './config-error.ts';
import { readConfigFile, type LoadedConfig } from './load-config.ts';
import { redactConfigText } from './redact.ts';

/** What a successful reload changed; given to `onChange` listeners. */
export interface ConfigChange {
  config: PlatformConfig;
  previous: PlatformConfig;
  /** Dotted keys whose value differs (arrays compare whole: `server.allowed_ips`, `providers`). */
  changed: string[];
  /** The subset of `changed` that only takes effect after a restart. */
  restart_required: string[];
}

export type ConfigChangeListener = (change: ConfigChange) => void | Promise<void>;

/**
 * Vetoes a reload: given the candidate config (valid on its own), returns the reasons it may not
 * replace the running one, or an empty list. E.g. the api's boot gate against its live listener.
 */
export type ConfigGuard = (candidate: PlatformConfig) => string[];

/** The running config, swapped atomically by POST /config/reload. */
export interface ConfigHolder {
  current(): PlatformConfig;
  /** The file's raw text with secret values redacted, or null when started without a file. */
  redactedText(): string | null;
  /**
   * Re-reads and validates the file, then asks every guard; on any error throws a ConfigError
   * and keeps the old config (nothing changes, no listener is called).
   */
  reload(): Promise<{ restart_required: string[] }>;
  /** Adds a guard every later reload must pass; returns its removal. */
  addGuard(guard: ConfigGuard): () => void;
  /**
   * Called after every successful reload, even when no key changed: files the config points at
   * (the licence) may have. Listeners run in order and are awaited; one that throws makes
   * `reload()` reject, but the new config stays in place. Returns an unsubscribe function.
   */
  onChange(listener: ConfigChangeListener): () => void;
}

/**
 * Keys read once at boot: listeners, engines, surfaces and the vault key. A change is applied to
 * the held config (GET /config shows it) but the running services keep the old value until
 * restart, so reload reports them. Prefixes: `storage` covers `storage.data_dir`.
 */
export const RESTART_REQUIRED_KEYS = ['server.listen', 'server.tls', 'storage', 'runtime', 'surfaces', 'registry', 'vault'] as const;

/**
 * Holds the config loaded at boot and reloads it from the same file. `env` and `cwd` are the
 * values `loadConfig` saw; reload needs neither today because the file's path is already absolute
 * and relative paths inside it resolve against its directory.
 */
export function createConfigHolder(loaded: LoadedConfig, _options: { env: Record<string, string | undefined>; cwd: string }): ConfigHolder {
  let state = { loaded, redacted: redact(loaded) };
  const listeners = new Set<ConfigChangeListener>();
  const guards = new Set<ConfigGuard>();
  // Reloads are serialized so that two concurrent POST /config/reload cannot interleave swaps.
  let queue: Promise<unknown> = Promise.resolve();

  const reloadOnce = async (): Promise<{ restart_required: string[] }> => {
    const { path, source } = state.loaded;
    if (path === null) throw new ConfigError(['cannot reload: the platform was started without a config file']);
    const next = await readConfigFile(path, source);
    const vetoes = [...guards].flatMap((guard) => guard(next.config));
    if (vetoes.length > 0) throw new ConfigError(vetoes, { heading: `Config reload refused, ${path} was not applied` });
    const previous = state.loaded.config;
    state = { loaded: next, redacted: redact(next) };
    const changed = changedKeys(previous, next.config);
    const restart_required = changed.filter(needsRestart);
    for (const listener of [...listeners]) await listener({ config: next.config, previous, changed, restart_required });
    return { restart_required };
  };

  return {
    current: () => state.loaded.config,
    redactedText: () => state.redacted,
    reload: () => {
      const run = queue.then(reloadOnce);
      queue = run.catch(() => undefined);
      return run;
    },
    onChange: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    addGuard: (guard) => {
      guards.add(guard);
      return () => void guards.delete(guard);
    },
  };
}

function redact(loaded: LoadedConfig): string | null {
  return loaded.rawText === null ? null : redactConfigText(loaded.rawText);
}

function needsRestart(key: string): boolean {
  return RESTART_REQUIRED_KEYS.some((prefix) => key === prefix || key.startsWith(`${prefix}.`));
}

/** Dotted leaf keys whose values differ between two configs. */
export function changedKeys(before: PlatformConfig, after: PlatformConfig): string[] {
  const a = flatten(before);
  const b = flatten(after);
  const keys = [...new Set([...a.keys(), ...b.keys()])];
  return keys.filter((key) => a.get(key) !== b.get(key)).sort();
}

function flatten(value: unknown, prefix = '', into = new Map<string, string>()): Map<string, string> {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    for (const [key, child] of Object.entries(value)) flatten(child, prefix === '' ? key : `${prefix}.${key}`, into);
  } else if (value !== undefined) {
    into.set(prefix, JSON.stringify(value));
  }
  return into;
}
