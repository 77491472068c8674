import type { RegistryPackage } from '@agent-platform/contracts';
import { changePackage } from './package-change.ts';
import type { RegistryActor, RegistryContext } from './registry-context.ts';
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
  const verb = text === null ? 'undeprecate' : 'deprecate';
  return changePackage(ctx, name, actor, {
    action: `${verb} '${name}'`,
    scope: 'publish-update',
    apply: (current, now) => ({
      ...current,
      deprecated: text === null ? null : { message: text, deprecated_at: now, deprecated_by: actor.identity },
      updated_at: now,
    }),
    line: { action: verb, version: null, reason: text },
  });
}
