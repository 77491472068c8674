import type { RegistryPackage } from '@agent-platform/contracts';
import { createIssuerStore } from '../auth/issuer-store.ts';
import { createRegistryKeyService } from '../auth/registry-keys.ts';
import { KEY_IDENTITY_PREFIX, parseRegistryIdentity } from '../auth/registry-identity.ts';
import { changePackage } from './package-change.ts';
import type { RegistryActor, RegistryContext } from './registry-context.ts';
import { RegistryErrors } from './registry-error.ts';

/** An issuer URL (at most 2048 characters), `#` and a subject. */
const MAX_IDENTITY = 4096;

/**
 * `PUT /packages/{name}/owners` (docs/registry.md "Ownership"): an owner or a registry admin
 * replaces the owner list. Transfer = put the new owner in (and yourself out); an owner list is
 * never empty, so a package always has someone who can publish and yank it. Every owner must be
 * a qualified identity the registry knows (`ownerProblem`); bad input changes nothing.
 */
export async function replaceOwners(
  ctx: RegistryContext,
  name: string,
  owners: readonly string[],
  actor: RegistryActor,
): Promise<RegistryPackage> {
  const next = normalizeOwners(owners);
  return changePackage(ctx, name, actor, {
    action: `change the owners of '${name}'`,
    scope: 'change-owners',
    check: async (pkg) => {
      for (const owner of next) {
        // An owner already on the list stays allowed (its key may since be revoked): only new names are looked up.
        const problem = pkg.owners.includes(owner) ? null : await ownerProblem(ctx, owner);
        if (problem !== null)
          throw RegistryErrors.validation(`owner '${owner.slice(0, 120)}' ${problem}`, { owner: owner.slice(0, 120) });
      }
    },
    apply: (current, now) => ({ ...current, owners: next, updated_at: now }),
    line: { action: 'owners', version: null, reason: null, owners: next },
  });
}

/**
 * Why `identity` cannot become an owner, or null (docs/registry.md "Ownership"): it must be
 * qualified, and name a registry key that can still be used (not revoked, not expired) or a
 * registered issuer. A token's subject cannot be checked with its provider: any subject of a
 * registered issuer is accepted.
 */
async function ownerProblem(ctx: RegistryContext, identity: string): Promise<string | null> {
  const parsed = parseRegistryIdentity(identity);
  if (parsed === null)
    return `is not a qualified identity: name a registry key as ${KEY_IDENTITY_PREFIX}<key name> or a token's caller as <issuer>#<sub> (GET /auth/whoami shows yours)`;
  if (parsed.kind === 'key') {
    const usable = await createRegistryKeyService(ctx).hasLiveKey(parsed.name);
    return usable ? null : `names no registry key in use (GET /keys lists them; create the key first)`;
  }
  const issuer = await createIssuerStore(ctx).findByIssuer(parsed.issuer);
  return issuer === null ? `names an issuer this registry does not know (${parsed.issuer.slice(0, 120)}; GET /admin/issuers lists them)` : null;
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
