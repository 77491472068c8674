import type { RegistryPackage } from '@agent-platform/contracts';
import { afterChange, assertMayChange, type RegistryActor, type RegistryContext } from './registry-context.ts';
import { loadPackage } from './package-reads.ts';
import { packageView } from './package-views.ts';
import { RegistryErrors } from './registry-error.ts';

/**
 * `PUT` / `DELETE /packages/{name}/deprecation` (docs/registry.md "Deprecation"): an owner (a
 * registry admin, a token with `publish-update`) marks the whole package deprecated with a message,
 * or takes the mark off. Nothing else changes: every version still downloads and installs; the
 * package view, its downloads (`x-registry-deprecated`) and the CLI say so. A history line records
 * each change.
 */
export async function setDeprecation(ctx: RegistryContext, name: string, message: string | null, actor: RegistryActor): Promise<RegistryPackage> {
  const text = message?.trim() ?? null;
  if (text === '') throw RegistryErrors.validation('a deprecation message must say something (what to use instead)', { field: 'message' });
  const { pkg, versions } = await loadPackage(ctx, name);
  assertMayChange(pkg, actor, `${text === null ? 'undeprecate' : 'deprecate'} '${name}'`, 'publish-update');
  const now = ctx.clock.now().toISOString();
  const updated = await ctx.records.packages.update(name, (current) => {
    if (current === null) throw RegistryErrors.notFound('package', name);
    // Checked again on the current document: a concurrent transfer may have removed the caller.
    assertMayChange(current.doc, actor, `${text === null ? 'undeprecate' : 'deprecate'} '${name}'`, 'publish-update');
    const deprecated = text === null ? null : { message: text, deprecated_at: now, deprecated_by: actor.identity };
    return { ...current.doc, deprecated, updated_at: now };
  });
  await afterChange(ctx, {
    name,
    at: now,
    action: text === null ? 'undeprecate' : 'deprecate',
    version: null,
    identity: actor.identity,
    reason: text,
    security: false,
  });
  return packageView(updated?.doc ?? pkg, versions);
}
