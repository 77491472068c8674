import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** A registry login kept by `agent-platform registry login` (docs/packages.md "Registry login"). */
export interface RegistryLogin {
  registry: string;
  key: string;
}

type Env = Record<string, string | undefined>;

export const CREDENTIALS_FILE = 'credentials.json';

/** `$AP_CLI_CONFIG_DIR`, else `$XDG_CONFIG_HOME/agent-platform`, else `~/.config/agent-platform`. */
export function cliConfigDir(env: Env): string {
  if (nonEmpty(env.AP_CLI_CONFIG_DIR)) return env.AP_CLI_CONFIG_DIR;
  if (nonEmpty(env.XDG_CONFIG_HOME)) return join(env.XDG_CONFIG_HOME, 'agent-platform');
  return join(nonEmpty(env.HOME) ? env.HOME : homedir(), '.config', 'agent-platform');
}

/** The stored login, or null when there is none (a file that is not a login is an error naming it). */
export async function readLogin(env: Env): Promise<RegistryLogin | null> {
  const path = join(cliConfigDir(env), CREDENTIALS_FILE);
  const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (text === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = null;
  }
  const login = parsed as Partial<RegistryLogin> | null;
  if (typeof login?.registry !== 'string' || typeof login.key !== 'string')
    throw new Error(`${path} is not a registry login ({"registry", "key"}); delete it or run agent-platform registry login again`);
  return { registry: login.registry, key: login.key };
}

/** Writes the login readable by its owner only (0600, directory 0700), replacing any earlier one. */
export async function writeLogin(env: Env, login: RegistryLogin): Promise<string> {
  const dir = cliConfigDir(env);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, CREDENTIALS_FILE);
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(login, null, 2)}\n`, { mode: 0o600 });
  await chmod(temp, 0o600);
  await rename(temp, path);
  return path;
}

/** Removes the stored login; the login it removed, or null when there was none. */
export async function deleteLogin(env: Env): Promise<RegistryLogin | null> {
  const login = await readLogin(env).catch(() => null);
  await rm(join(cliConfigDir(env), CREDENTIALS_FILE), { force: true });
  return login;
}

/** A registry URL as compared and shown: without trailing slashes. */
export function normalizeRegistryUrl(url: string): string {
  return url.replace(/\/+$/, '');
}

/**
 * The registry a command talks to and the key it sends: the URL from `--registry`, else
 * `AP_REGISTRY_URL`, else the stored login; the key from `AP_REGISTRY_KEY`, else the stored
 * login's, only when the login is for that same registry (a key never goes to another registry).
 */
export async function resolveRegistry(flag: string | undefined, env: Env): Promise<{ url: string; key: string | undefined } | null> {
  const login = await readLogin(env);
  const chosen = nonEmpty(flag) ? flag : nonEmpty(env.AP_REGISTRY_URL) ? env.AP_REGISTRY_URL : login?.registry;
  if (chosen === undefined) return null;
  const url = normalizeRegistryUrl(chosen);
  if (nonEmpty(env.AP_REGISTRY_KEY)) return { url, key: env.AP_REGISTRY_KEY };
  return { url, key: login !== null && normalizeRegistryUrl(login.registry) === url ? login.key : undefined };
}

function nonEmpty(value: string | undefined): value is string {
  return value !== undefined && value !== '';
}
