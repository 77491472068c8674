import type { RegistryPackage } from '@agent-platform/contracts';
import { packageView } from './package-views.ts';
import {
  afterChange,
  assertMayChange,
  type RegistryActor,
  type RegistryContext,
} from './registry-context.ts';
import { loadPackage } from './package-reads.ts';
import { RegistryErrors } from './registry-error.ts';

const MAX_IDENTITY = 256;

/**
 * `PUT /packages/{name}/owners` (docs/registry.md "Ownership"): an owner or a registry admin
 * replaces the owner list. Transfer = put the new owner in (and yourself out); an owner list is
 * never empty, so a package always has someone who can publish and yank it.
 */
export async function replaceOwners(
  ctx: RegistryContext,
  name: string,
  owners: readonly string[],
  actor: RegistryActor,
): Promise<RegistryPackage> {
  const next = normalizeOwners(owners);
  const { pkg } = await loadPackage(ctx, name);
  assertMayChange(pkg, actor, `change the owners of '${name}'`);
  const now = ctx.clock.now().toISOString();
  const updated = await ctx.records.packages.update(name, (current) => {
    if (current === null) throw RegistryErrors.notFound('package', name);
    // Checked again on the current document: a concurrent transfer may have removed the caller.
    assertMayChange(current.doc, actor, `change the owners of '${name}'`);
    return { ...current.doc, owners: next, updated_at: now };
  });
  await afterChange(ctx, {
    name,
    at: now,
    action: 'owners',
    version: null,
    identity: actor.identity,
    reason: null,
    security: false,
    owners: next,
  });
  const { versions } = await loadPackage(ctx, name);
  return packageView(updated?.doc ?? pkg, versions);
}

function normalizeOwners(owners: readonly string[]): string[] {
  const trimmed = owners.map((o) => o.trim());
  const bad = trimmed.find((o) => o === '' || o.length > MAX_IDENTITY || /\p{Cc}/u.test(o));
  if (bad !== undefined)
    throw RegistryErrors.validation(
      `owner '${bad.slice(0, 80)}' is not an identity: 1-${MAX_IDENTITY} characters, no control characters`,
      { owner: bad.slice(0, 80) },
    );
  return [...new Set(trimmed)];
}
