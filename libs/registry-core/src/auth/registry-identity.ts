/**
 * Who a registry caller is, qualified by where the identity comes from (docs/registry-auth.md
 * "Identities"), so that no two credentials share one: a registry key is `key:<key name>`, the
 * caller of an access token `<issuer>#<sub>`. Owners, `published_by`, `yanked_by` and history
 * lines hold these strings, and ownership compares them exactly.
 *
 * Unambiguous by construction: an issuer is an http(s) URL without a fragment (validIssuerBody),
 * so it never starts with `key:` and its first `#` is the separator; a key name or a subject may
 * hold any character after its prefix.
 */
export const KEY_IDENTITY_PREFIX = 'key:';

/** The caller of auth mode `disabled` (every caller the anonymous registry admin); never qualified. */
export const ANONYMOUS_IDENTITY = 'anonymous';

export type RegistryIdentity =
  | { kind: 'key'; name: string }
  | { kind: 'token'; issuer: string; subject: string };

export function keyIdentity(name: string): string {
  return `${KEY_IDENTITY_PREFIX}${name}`;
}

export function tokenIdentity(issuer: string, subject: string): string {
  return `${issuer}#${subject}`;
}

/** The parts of a qualified identity; null for anything else (a bare legacy name, `anonymous`). */
export function parseRegistryIdentity(identity: string): RegistryIdentity | null {
  if (identity.startsWith(KEY_IDENTITY_PREFIX)) {
    const name = identity.slice(KEY_IDENTITY_PREFIX.length);
    return name === '' ? null : { kind: 'key', name };
  }
  const hash = identity.indexOf('#');
  if (hash < 0) return null;
  const issuer = identity.slice(0, hash);
  const subject = identity.slice(hash + 1);
  if (subject === '' || !/^https?:\/\/[^\s#]+$/.test(issuer)) return null;
  return { kind: 'token', issuer, subject };
}
