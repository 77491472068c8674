import { parseArgs } from 'node:util';
import { REGISTRY_TOKEN_SCOPES, type RegistryToken, type RegistryTokenScope } from '@agent-platform/contracts';
import { RegistryRequestError } from '@agent-platform/registry-core';
import { EXIT_FAILED, EXIT_OK, type CliIo } from './command.ts';
import { clientFor, PackageUsageError } from './package-registry-actions.ts';

export const TOKEN_USAGE = `  agent-platform registry token create --name <name> --scope <scope> [--scope ...]
                                      [--package <name or prefix*> ...] [--expires-in <90d>]
      Makes a token acting as you, limited to the scopes (${REGISTRY_TOKEN_SCOPES.join(', ')}),
      the packages and the expiry given. Its secret is printed once, on standard output.
  agent-platform registry token list
      Your tokens: id, name, scopes, packages, expiry, revoked (never a secret).
  agent-platform registry token revoke <id>
      Revokes one of your tokens; it stops working at once.
  Each takes --registry <url>; the key sent is $AP_REGISTRY_KEY, else the stored login's.`;

const registryOption = { registry: { type: 'string' } } as const;

/** `registry token create|list|revoke` (docs/registry-auth.md "Tokens"). */
export async function runTokenAction(args: readonly string[], io: CliIo): Promise<number> {
  const [action, ...rest] = args;
  try {
    if (action === 'create') return await create(rest, io);
    if (action === 'list') return await list(rest, io);
    if (action === 'revoke') return await revoke(rest, io);
    throw new PackageUsageError(action === undefined ? 'registry token needs an action: create, list or revoke' : `unknown token action '${action}'`);
  } catch (error) {
    if (!(error instanceof RegistryRequestError)) throw error;
    io.err(`agent-platform registry token ${action ?? ''}: ${error.message}`);
    if (error.status === 401) io.err('Run agent-platform registry login, or set AP_REGISTRY_KEY, to send your registry key.');
    return EXIT_FAILED;
  }
}

async function create(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: {
      ...registryOption,
      name: { type: 'string' },
      scope: { type: 'string', multiple: true },
      package: { type: 'string', multiple: true },
      'expires-in': { type: 'string' },
    },
  });
  if (positionals.length > 0) throw new PackageUsageError(`unexpected argument '${positionals[0] ?? ''}'`);
  if (values.name === undefined || values.name.trim() === '') throw new PackageUsageError('registry token create needs --name <name>');
  const scopes = values.scope ?? [];
  if (scopes.length === 0) throw new PackageUsageError(`registry token create needs at least one --scope (${REGISTRY_TOKEN_SCOPES.join(', ')})`);
  const unknown = scopes.filter((scope) => !(REGISTRY_TOKEN_SCOPES as readonly string[]).includes(scope));
  if (unknown.length > 0) throw new PackageUsageError(`unknown scope '${unknown[0] ?? ''}': one of ${REGISTRY_TOKEN_SCOPES.join(', ')}`);
  const client = await clientFor(values.registry, io);
  const token = await client.createToken({
    name: values.name,
    scopes: scopes as RegistryTokenScope[],
    ...(values.package === undefined ? {} : { packages: values.package }),
    ...(values['expires-in'] === undefined ? {} : { expires_in: values['expires-in'] }),
  });
  io.err(`Made token ${token.id} (${describe(token)}) on ${client.url}. Its secret follows; it is not shown again:`);
  io.out(token.secret);
  return EXIT_OK;
}

async function list(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({ args: [...args], allowPositionals: true, options: registryOption });
  if (positionals.length > 0) throw new PackageUsageError(`unexpected argument '${positionals[0] ?? ''}'`);
  const client = await clientFor(values.registry, io);
  const tokens = await client.tokens();
  if (tokens.length === 0) {
    io.out(`No tokens on ${client.url}.`);
    return EXIT_OK;
  }
  for (const token of tokens) io.out(`${token.id}  ${token.revoked ? 'revoked ' : ''}${describe(token)}`);
  return EXIT_OK;
}

async function revoke(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({ args: [...args], allowPositionals: true, options: registryOption });
  const [id, ...rest] = positionals;
  if (id === undefined) throw new PackageUsageError('registry token revoke needs a token id (registry token list shows them)');
  if (rest.length > 0) throw new PackageUsageError(`unexpected argument '${rest[0] ?? ''}'`);
  const client = await clientFor(values.registry, io);
  const token = await client.revokeToken(id);
  io.out(`Revoked token ${token.id} (${token.name}) on ${client.url}.`);
  return EXIT_OK;
}

function describe(token: RegistryToken): string {
  const packages = token.packages === null ? 'every package' : token.packages.join(', ');
  const expiry = token.expires_at === null ? 'never expires' : `expires ${token.expires_at}`;
  return `${token.name}: ${token.scopes.join(', ')} on ${packages}, ${expiry}`;
}
