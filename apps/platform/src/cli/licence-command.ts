import { createPublicKey } from 'node:crypto';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { generateLicenceKeyPair, issueLicence } from '@agent-platform/config';
import type { LicenceClaims } from '@agent-platform/contracts';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, type CliIo, type CommandGroup } from './command.ts';

export const LICENCE_KEY_FILES = { privateKey: 'licence-private.pem', publicKey: 'licence-public.pem' } as const;

const USAGE = `Usage:
  agent-platform licence keygen --out <dir>
      Writes a licence signing key pair: <dir>/${LICENCE_KEY_FILES.privateKey} (mode 0600) and
      <dir>/${LICENCE_KEY_FILES.publicKey} (for [licence] public_key_file). Never overwrites.
  agent-platform licence issue --key <private.pem> --carrier-name <name> --carrier-id <id>
      [--days 30] [--period-start <iso>] [--period-end <iso>]
      [--budget <workflow_type>=<count|null>]... [--cloud-spend-usd <usd>]
      [--entitlement <provider_id>=<usd|null>]... [--providers local,managed_cloud]
      [--out <file>]
      Signs a licence (DECISIONS D3) valid for --days from now; its budget period defaults to
      the same span. Prints the token, or writes it to --out. Default providers: local.
      A budget or entitlement of null is uncapped.

docs/licence.md describes the claims. Exit status: 0 done, 1 failed, 2 bad command line.`;

/** A mistake in the command line: exit code 2 and the usage text. */
class UsageError extends Error {}

/**
 * `agent-platform licence ...`: development and issuing tools for carrier licences
 * (docs/licence.md). Exit codes: 0 done, 1 the operation failed (a key file exists, an unreadable
 * or non-Ed25519 key), 2 the command line is wrong.
 */
export const licenceCommand: CommandGroup = {
  summary: 'generate a licence signing key pair or issue a signed licence',
  usage: USAGE,
  async run(args, io) {
    const [sub, ...rest] = args;
    try {
      if (sub === 'keygen') return await keygen(rest, io);
      if (sub === 'issue') return await issue(rest, io);
      if (sub === '--help' || sub === '-h' || sub === 'help') {
        io.out(USAGE);
        return EXIT_OK;
      }
      throw new UsageError(sub === undefined ? 'missing action (keygen or issue)' : `unknown action '${sub}'`);
    } catch (error) {
      if (error instanceof UsageError || isParseArgsError(error)) {
        io.err(`agent-platform licence: ${(error as Error).message}`);
        io.err(USAGE);
        return EXIT_USAGE;
      }
      io.err(`agent-platform licence: ${error instanceof Error ? error.message : String(error)}`);
      return EXIT_FAILED;
    }
  },
};

async function keygen(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({ args: [...args], options: { out: { type: 'string' } }, strict: true });
  if (values.out === undefined) throw new UsageError('keygen needs --out <dir>');
  const dir = resolve(io.cwd, values.out);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const { privateKeyPem, publicKeyPem } = await generateLicenceKeyPair();
  const privatePath = join(dir, LICENCE_KEY_FILES.privateKey);
  const publicPath = join(dir, LICENCE_KEY_FILES.publicKey);
  // An existing signing key is never replaced: every licence it signed would die with it. Both
  // files are checked first so that a refusal leaves no half-written pair behind.
  for (const path of [privatePath, publicPath]) {
    if (await exists(path)) throw new Error(`${path} already exists; refusing to overwrite a signing key`);
  }
  await writeNew(privatePath, privateKeyPem, 0o600);
  await writeNew(publicPath, publicKeyPem, 0o644);
  io.out(`wrote ${privatePath} (private signing key, mode 0600: keep it secret)`);
  io.out(`wrote ${publicPath} (set [licence] public_key_file to it)`);
  return EXIT_OK;
}

async function issue(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    strict: true,
    options: {
      key: { type: 'string' },
      'carrier-name': { type: 'string' },
      'carrier-id': { type: 'string' },
      days: { type: 'string', default: '30' },
      'period-start': { type: 'string' },
      'period-end': { type: 'string' },
      budget: { type: 'string', multiple: true, default: [] },
      'cloud-spend-usd': { type: 'string' },
      entitlement: { type: 'string', multiple: true, default: [] },
      providers: { type: 'string', default: 'local' },
      out: { type: 'string' },
    },
  });
  const keyPath = required(values.key, '--key');
  const iat = Math.floor(Date.now() / 1000);
  const exp = iat + positiveInteger(values.days, '--days') * 86_400;
  const claims: LicenceClaims = {
    carrier_name: required(values['carrier-name'], '--carrier-name'),
    carrier_id: required(values['carrier-id'], '--carrier-id'),
    iat,
    exp,
    period_start: isoTime(values['period-start'], iat, '--period-start'),
    period_end: isoTime(values['period-end'], exp, '--period-end'),
    transaction_budgets: Object.fromEntries(values.budget.map((b) => pair(b, '--budget', (v) => nonNegative(v, '--budget', true)))),
    ...(values['cloud-spend-usd'] === undefined ? {} : { cloud_spend_usd: nonNegative(values['cloud-spend-usd'], '--cloud-spend-usd', false) }),
    provider_entitlements: values.entitlement.map((e) => {
      const [provider_id, budget_usd] = pair(e, '--entitlement', (v) => nonNegative(v, '--entitlement', false));
      return { provider_id, budget_usd };
    }),
    providers: providerFlags(values.providers),
  };
  if (Date.parse(claims.period_end) <= Date.parse(claims.period_start)) throw new UsageError('the period must end after it starts');
  const privateKeyPem = await readFile(resolve(io.cwd, keyPath), 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new Error(`cannot read --key ${keyPath}: ${error.code ?? error.message}`, { cause: error });
  });
  assertPrivateKey(privateKeyPem, keyPath);
  const token = await issueLicence(privateKeyPem, claims);
  const summary = `licence for ${claims.carrier_name} (${claims.carrier_id}), expires ${new Date(exp * 1000).toISOString()}`;
  if (values.out === undefined) {
    // The token alone on stdout, so that `> licence.jwt` or `$(...)` captures exactly it.
    io.out(token);
    io.err(`issued ${summary}`);
  } else {
    const out = resolve(io.cwd, values.out);
    await writeFile(out, `${token}\n`, { mode: 0o644 });
    io.out(`wrote ${out}: ${summary}`);
  }
  return EXIT_OK;
}

function required(value: string | undefined, flag: string): string {
  if (value === undefined || value.trim() === '') throw new UsageError(`issue needs ${flag}`);
  return value;
}

function positiveInteger(text: string, flag: string): number {
  if (!/^[1-9]\d*$/.test(text)) throw new UsageError(`${flag} must be a positive whole number of days (got '${text}')`);
  return Number(text);
}

/** A budget value: a non-negative number (whole for a transaction count), or `null` for uncapped. */
function nonNegative(text: string, flag: string, whole: boolean): number | null {
  if (text === 'null') return null;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < 0 || (whole && !Number.isInteger(value))) {
    throw new UsageError(`${flag} value must be ${whole ? 'a whole number' : 'a number'} >= 0 or null (got '${text}')`);
  }
  return value;
}

/** `name=value`, split at the last `=` so that a name may hold one. */
function pair<T>(text: string, flag: string, parse: (value: string) => T): [string, T] {
  const at = text.lastIndexOf('=');
  if (at <= 0) throw new UsageError(`${flag} takes <name>=<value> (got '${text}')`);
  return [text.slice(0, at), parse(text.slice(at + 1))];
}

function isoTime(text: string | undefined, fallbackSecs: number, flag: string): string {
  if (text === undefined) return new Date(fallbackSecs * 1000).toISOString().replace(/\.000Z$/, 'Z');
  if (Number.isNaN(Date.parse(text))) throw new UsageError(`${flag} must be an ISO 8601 date-time (got '${text}')`);
  return new Date(text).toISOString().replace(/\.000Z$/, 'Z');
}

function providerFlags(list: string): LicenceClaims['providers'] {
  const names = list.split(',').map((n) => n.trim()).filter((n) => n !== '');
  const unknown = names.filter((n) => n !== 'local' && n !== 'managed_cloud');
  if (unknown.length > 0) throw new UsageError(`--providers accepts local and managed_cloud (got ${unknown.join(', ')})`);
  return { local: names.includes('local'), managed_cloud: names.includes('managed_cloud') };
}

function assertPrivateKey(pem: string, path: string): void {
  try {
    if (createPublicKey(pem).asymmetricKeyType === 'ed25519') return;
  } catch {
    // Not a key at all: reported below like a key of the wrong type.
  }
  throw new Error(`--key ${path} is not an Ed25519 private key (PEM, PKCS#8); create one with: agent-platform licence keygen --out <dir>`);
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

async function writeNew(path: string, text: string, mode: number): Promise<void> {
  try {
    await writeFile(path, text, { flag: 'wx', mode });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new Error(`${path} already exists; refusing to overwrite a signing key`, { cause: error });
    throw error;
  }
}

function isParseArgsError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_');
}
