import type { JWTPayload } from 'jose';

/**
 * The external role names a token carries in `roleClaim`. The claim is first looked up by its
 * whole name (namespaced claims such as `https://example.com/roles` contain dots), then as a
 * dotted path into nested objects (`realm_access.roles`). A string value is one role, and also
 * its space-separated words (so `scope` works as a role claim); an array gives its strings.
 */
export function externalRoles(payload: JWTPayload, roleClaim: string): string[] {
  const value = Object.prototype.hasOwnProperty.call(payload, roleClaim) ? payload[roleClaim] : walk(payload, roleClaim.split('.'));
  if (typeof value === 'string') {
    const words = value.split(/\s+/).filter((w) => w !== '');
    return words.length > 1 ? [value, ...words] : [value];
  }
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return [];
}

function walk(value: unknown, path: string[]): unknown {
  let current = value;
  for (const segment of path) {
    if (typeof current !== 'object' || current === null || Array.isArray(current)) return undefined;
    if (!Object.prototype.hasOwnProperty.call(current, segment)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

/**
 * The platform role of a token: every external role is mapped through `mapping`, and of the
 * mapped roles the first in `precedence` (most privileged first) wins. Null when none maps.
 */
export function mapRole<R extends string>(external: readonly string[], mapping: Readonly<Record<string, R>>, precedence: readonly R[]): R | null {
  const mapped = new Set<R>();
  for (const name of external) {
    if (Object.prototype.hasOwnProperty.call(mapping, name)) mapped.add(mapping[name] as R);
  }
  return precedence.find((role) => mapped.has(role)) ?? null;
}
