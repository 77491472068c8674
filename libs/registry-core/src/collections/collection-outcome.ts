import type { PackageProblem, RegistryRole } from '@agent-platform/contracts';

/** Who asks: the registry caller's identity and role. */
export interface CollectionCaller {
  identity: string;
  role: RegistryRole;
}

/**
 * Why a collection operation was refused. This library sits below the domain (like
 * libs/packages): the registry's routes turn each kind into the spec's error (docs/registry-search.md
 * "Errors"): invalid 400 ValidationError with `details.problems`, not-found 404, duplicate and
 * conflict 409 Conflict, forbidden 403 PermissionDenied.
 */
export type CollectionFailure =
  | { kind: 'invalid'; name: string | null; problems: PackageProblem[] }
  | { kind: 'not-found'; name: string }
  | { kind: 'duplicate'; name: string }
  | { kind: 'conflict'; name: string }
  | { kind: 'forbidden'; name: string; identity: string };

export type CollectionOutcome<T> = { ok: true; value: T } | { ok: false; failure: CollectionFailure };

export const refused = (failure: CollectionFailure): { ok: false; failure: CollectionFailure } => ({ ok: false, failure });
