import { parseArgs } from 'node:util';
import type { RegistryPackage } from '@agent-platform/contracts';
import { EXIT_FAILED, EXIT_OK, type CliIo } from './command.ts';
import { clientFor, PackageUsageError, registryRefused } from './package-registry-actions.ts';

export const OWNERS_USAGE = `  agent-platform package owners <name> [--add <owner> ...] [--remove <owner> ...] [--registry <url>]
      show the owners and pending invitations; --add invites an owner (key:<name>,
      <issuer>#<sub> or team:<team>), who owns the package once it accepts; --remove removes an
      owner at once or withdraws an invitation (a registry admin's --add applies at once)
  agent-platform package owners <name> --accept [--team <team>] [--registry <url>]
      accept your invitation to own the package, or one made to a team you own`;

/**
 * `package owners` (docs/registry.md "Ownership"): the registry's owner list is set whole
 * (`PUT /packages/{name}/owners`), so the CLI starts from the current owners and pending
 * invitations and applies --add and --remove to them; an invitation left out would be withdrawn.
 */
export async function runOwnersAction(args: readonly string[], io: CliIo): Promise<number> {
  try {
    return await owners(args, io);
  } catch (error) {
    return registryRefused('owners', error, io);
  }
}

async function owners(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: {
      registry: { type: 'string' },
      add: { type: 'string', multiple: true },
      remove: { type: 'string', multiple: true },
      accept: { type: 'boolean' },
      team: { type: 'string' },
    },
  });
  const [name, ...rest] = positionals;
  if (name === undefined) throw new PackageUsageError('package owners needs a package name');
  if (rest.length > 0) throw new PackageUsageError(`unexpected argument '${rest[0] ?? ''}'`);
  const add = values.add ?? [];
  const remove = values.remove ?? [];
  const accept = values.accept === true;
  if (accept && (add.length > 0 || remove.length > 0)) throw new PackageUsageError('--accept takes no --add or --remove');
  if (values.team !== undefined && !accept) throw new PackageUsageError('--team goes with --accept');
  const client = await clientFor(values.registry, io);
  if (accept) {
    const pkg = await client.acceptOwnership(name, values.team === undefined ? undefined : `team:${values.team}`);
    io.out(`Accepted: ${values.team === undefined ? 'you own' : `team ${values.team} owns`} ${name} on ${client.url}.`);
    return show(pkg, io);
  }
  // The owners route: the public package view leaves the pending invitations out, and a list set
  // without them would withdraw them.
  const current = await client.owners(name);
  if (current === null) {
    io.err(`agent-platform package owners: package '${name}' not found on ${client.url}`);
    return EXIT_FAILED;
  }
  if (add.length === 0 && remove.length === 0) return show(current, io);
  const listed = [...current.owners, ...(current.pending_owners ?? []).map((p) => p.owner), ...add.map((o) => o.trim())];
  const next = [...new Set(listed)].filter((o) => !remove.map((r) => r.trim()).includes(o));
  const pkg = await client.setOwners(name, next);
  io.out(`Owners of ${name} set on ${client.url}.`);
  return show(pkg, io);
}

function show(pkg: Pick<RegistryPackage, 'name' | 'owners' | 'pending_owners'>, io: CliIo): number {
  io.out(`${pkg.name} owners: ${pkg.owners.length === 0 ? '(none: registry admins only)' : pkg.owners.join(', ')}`);
  for (const pending of pkg.pending_owners ?? []) io.out(`  invited ${pending.owner} (by ${pending.invited_by}, ${pending.invited_at}); owner once it accepts`);
  return EXIT_OK;
}
