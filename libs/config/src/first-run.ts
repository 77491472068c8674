import { createPublicKey } from 'node:crypto';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from './config-error.ts';
import { createDevLicenceClaims, generateLicenceKeyPair, issueLicence } from './licence-keys.ts';
import { DEFAULT_CONFIG_FILE, locateConfigFile, readConfigFile, type ConfigLookup, type LoadedConfig } from './load-config.ts';

export const FIRST_RUN_DATA_DIR = '.agent-platform';
export const DEV_LICENCE_FILES = {
  privateKey: 'licence-dev-private.pem',
  publicKey: 'licence-dev-public.pem',
  licence: 'licence-dev.jwt',
} as const;
const FIRST_RUN_LISTEN = '127.0.0.1:4200';
const DEV_LICENCE_DAYS = 30;

export interface FirstRunOptions {
  cwd: string;
  env: Record<string, string | undefined>;
  /** Receives the lines telling the operator what was written and what to do next. */
  log: (line: string) => void;
  /** Start of the development licence; the current time unless a test fixes it. */
  now?: () => Date;
}

/**
 * The all-in-one root's entry: the config file found by `locateConfigFile`, or, when there is
 * none, the first-run setup's.
 */
export async function loadOrCreateConfig(options: ConfigLookup & FirstRunOptions): Promise<LoadedConfig> {
  const location = await locateConfigFile(options);
  return location.path === null ? runFirstRunSetup(options) : readConfigFile(location.path, location.source);
}

/**
 * First-run setup (DECISIONS D1): writes `./agent-platform.toml` (loopback, auth mode local, a
 * development licence, private network targets allowed), a development licence signing key pair
 * and a 30-day development licence for the `local` provider under `./.agent-platform`, prints
 * what it wrote, and returns the loaded config. Never overwrites a file: an existing config file
 * is loaded as is, and existing development licence files are reused.
 */
export async function runFirstRunSetup(options: FirstRunOptions): Promise<LoadedConfig> {
  const { cwd, log } = options;
  const configPath = join(cwd, DEFAULT_CONFIG_FILE);
  if (await exists(configPath)) return readConfigFile(configPath, 'cwd');
  const dataDir = join(cwd, FIRST_RUN_DATA_DIR);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const licence = await ensureDevLicence(dataDir, (options.now ?? (() => new Date()))());
  try {
    await writeFile(configPath, firstRunConfigText(), { flag: 'wx', mode: 0o644 });
  } catch (cause) {
    // Another process won the race: its file is the config.
    if ((cause as NodeJS.ErrnoException).code === 'EEXIST') return readConfigFile(configPath, 'cwd');
    throw cause;
  }
  const loaded = await readConfigFile(configPath, 'first-run');
  for (const line of firstRunReport(configPath, dataDir, licence)) log(line);
  return loaded;
}

interface DevLicence {
  path: string;
  reused: boolean;
  expiresAt: string | null;
}

async function ensureDevLicence(dataDir: string, now: Date): Promise<DevLicence> {
  const path = (name: string) => join(dataDir, name);
  const [hasPrivate, hasPublic, hasLicence] = await Promise.all(Object.values(DEV_LICENCE_FILES).map((f) => exists(path(f))));
  if (!hasPrivate && (hasPublic || hasLicence)) {
    const strays = [DEV_LICENCE_FILES.publicKey, DEV_LICENCE_FILES.licence].filter((_, i) => [hasPublic, hasLicence][i]);
    throw new ConfigError(
      strays.map((f) => `${path(f)}: exists without ${DEV_LICENCE_FILES.privateKey}; move it away so that the first-run setup can write a new one`),
      { heading: 'First-run setup cannot write the development licence:' },
    );
  }
  let privateKeyPem: string;
  if (hasPrivate) {
    privateKeyPem = await readFile(path(DEV_LICENCE_FILES.privateKey), 'utf8');
  } else {
    const pair = await generateLicenceKeyPair();
    privateKeyPem = pair.privateKeyPem;
    await writeFile(path(DEV_LICENCE_FILES.privateKey), privateKeyPem, { flag: 'wx', mode: 0o600 });
  }
  if (!hasPublic) {
    const publicKeyPem = createPublicKey(privateKeyPem).export({ type: 'spki', format: 'pem' }).toString();
    await writeFile(path(DEV_LICENCE_FILES.publicKey), publicKeyPem, { flag: 'wx', mode: 0o644 });
  }
  if (hasLicence) return { path: path(DEV_LICENCE_FILES.licence), reused: true, expiresAt: null };
  const claims = createDevLicenceClaims(now, DEV_LICENCE_DAYS);
  await writeFile(path(DEV_LICENCE_FILES.licence), `${await issueLicence(privateKeyPem, claims)}\n`, { flag: 'wx', mode: 0o644 });
  return { path: path(DEV_LICENCE_FILES.licence), reused: false, expiresAt: claims.period_end };
}

/** The commented config file the first run writes; each setting says why it is there. */
export function firstRunConfigText(): string {
  const data = `./${FIRST_RUN_DATA_DIR}`;
  return `# Agent Platform configuration, written by the first-run setup.
# Reference: docs/config.md. Relative paths resolve against this file's directory.
# Keys left out take their defaults. After editing: POST /config/reload, or restart.

[server]
# Loopback only: reachable from this machine alone.
listen = "${FIRST_RUN_LISTEN}"

[surfaces]
# The web dashboard at http://${FIRST_RUN_LISTEN}/dashboard (docs/dashboard.md): set to true,
# restart, open it in a browser and sign in with an API key.
dashboard = false

[storage]
# Embedded store, vault key, licence files, archives and backups.
data_dir = "${data}"

[auth]
# Every request needs an API key. While no key exists, POST /auth/keys is open (bootstrap)
# so that you can create the first admin key; after that, normal auth applies.
mode = "local"

[licence]
# DEVELOPMENT licence: 30 days, built-in "local" provider only, no budgets, signed by a key
# generated on this machine. Replace both lines with your carrier licence and its public key.
file = "${data}/${DEV_LICENCE_FILES.licence}"
public_key_file = "${data}/${DEV_LICENCE_FILES.publicKey}"

[network]
# Development: webhooks, channels and integrations may call services on this machine and LAN.
# Set to false in production (DECISIONS D9).
allow_private_targets = true
`;
}

function firstRunReport(configPath: string, dataDir: string, licence: DevLicence): string[] {
  const licenceLine = licence.reused
    ? `  licence:     ${licence.path} (existing DEVELOPMENT licence reused; delete the licence-dev-* files for a fresh one)`
    : `  licence:     ${licence.path} (DEVELOPMENT licence, local provider only, expires ${licence.expiresAt})`;
  return [
    'First run: no config file was found, so a development setup was written:',
    `  config:      ${configPath}`,
    `  data dir:    ${dataDir}`,
    licenceLine,
    `  signing key: ${join(dataDir, DEV_LICENCE_FILES.privateKey)} (private, mode 0600) and ${DEV_LICENCE_FILES.publicKey}`,
    'Auth mode is "local": every request needs an API key. Create the first admin key now (allowed once, while no key exists):',
    `  curl -s -X POST http://${FIRST_RUN_LISTEN}/auth/keys -H 'content-type: application/json' -d '{"name":"admin","role":"admin"}'`,
    'The reply holds "secret"; send it on every request as: Authorization: Bearer <secret>',
  ];
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
