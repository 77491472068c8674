import { parseArgs } from 'node:util';
import type { TrustedPublisher } from '@agent-platform/contracts';
import { RegistryRequestError } from '@agent-platform/registry-core';
import { EXIT_FAILED, EXIT_OK, type CliIo } from './command.ts';
import { clientFor, PackageUsageError } from './package-registry-actions.ts';

export const TRUSTED_PUBLISHER_USAGE = `  agent-platform registry trusted-publisher set <package> --issuer <url> --claim <name>=<value> [--claim ...] [--add]
      Lets CI tokens of that issuer (registered on the registry) whose claims equal these publish
      new versions of the package (trusted publishing); replaces the package's list, or with
      --add appends to it. --none instead of --issuer and --claim turns trusted publishing off.
  agent-platform registry trusted-publisher list <package>
      The package's trusted publishers: issuer and claims.`;

const registryOption = { registry: { type: 'string' } } as const;

/** `registry trusted-publisher set|list` (docs/registry-auth.md "Trusted publishing"). */
export async function runTrustedPublisherAction(args: readonly string[], io: CliIo): Promise<number> {
  const [action, ...rest] = args;
  try {
    if (action === 'set') return await set(rest, io);
    if (action === 'list') return await list(rest, io);
    throw new PackageUsageError(action === undefined ? 'registry trusted-publisher needs an action: set or list' : `unknown trusted-publisher action '${action}'`);
  } catch (error) {
    if (!(error instanceof RegistryRequestError)) throw error;
    io.err(`agent-platform registry trusted-publisher ${action ?? ''}: ${error.message}`);
    if (error.status === 401) io.err('Run agent-platform registry login, or set AP_REGISTRY_KEY, to send your registry key.');
    return EXIT_FAILED;
  }
}

async function set(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: { ...registryOption, issuer: { type: 'string' }, claim: { type: 'string', multiple: true }, add: { type: 'boolean' }, none: { type: 'boolean' } },
  });
  const name = onePackage(positionals, 'set');
  let publishers: TrustedPublisher[] = [];
  if (values.none === true) {
    if (values.issuer !== undefined || values.claim !== undefined || values.add === true) throw new PackageUsageError('--none takes no --issuer, --claim or --add');
  } else {
    if (values.issuer === undefined || values.issuer === '') throw new PackageUsageError('registry trusted-publisher set needs --issuer <url> (or --none)');
    const claims = parseClaims(values.claim ?? []);
    publishers = [{ issuer: values.issuer, claims }];
  }
  const client = await clientFor(values.registry, io);
  if (values.add === true) publishers = [...(await client.trustedPublishers(name)), ...publishers];
  const stored = await client.setTrustedPublishers(name, publishers);
  io.out(stored.length === 0 ? `Trusted publishing of ${name} is off on ${client.url}.` : `Trusted publishers of ${name} on ${client.url}:`);
  for (const publisher of stored) io.out(describe(publisher));
  return EXIT_OK;
}

async function list(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({ args: [...args], allowPositionals: true, options: registryOption });
  const name = onePackage(positionals, 'list');
  const client = await clientFor(values.registry, io);
  const publishers = await client.trustedPublishers(name);
  if (publishers.length === 0) io.out(`No trusted publishers for ${name} on ${client.url}.`);
  for (const publisher of publishers) io.out(describe(publisher));
  return EXIT_OK;
}

function onePackage(positionals: readonly string[], action: string): string {
  const [name, ...rest] = positionals;
  if (name === undefined) throw new PackageUsageError(`registry trusted-publisher ${action} needs a package name`);
  if (rest.length > 0) throw new PackageUsageError(`unexpected argument '${rest[0] ?? ''}'`);
  return name;
}

/** `--claim repository=acme/x` pairs; the value may itself contain `=` (only the first one splits). */
function parseClaims(pairs: readonly string[]): Record<string, string> {
  if (pairs.length === 0) throw new PackageUsageError('registry trusted-publisher set needs at least one --claim <name>=<value> (repository, workflow, ref...)');
  const claims: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0 || at === pair.length - 1) throw new PackageUsageError(`--claim '${pair}' is not <name>=<value>`);
    claims[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return claims;
}

function describe(publisher: TrustedPublisher): string {
  const claims = Object.entries(publisher.claims).map(([name, value]) => `${name}=${value}`);
  return `  ${publisher.issuer}  ${claims.join(' ')}`;
}
