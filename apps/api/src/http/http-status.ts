/**
 * HTTP status overrides for the few errors whose status the spec's category table does not give.
 *
 * Domain code never sees status codes, so the override is attached here, in the api, to an error
 * built by a domain factory: the 413 of a body over `body_limit_bytes` carries category
 * `SizeLimitExceeded` (DECISIONS D7) although the spec's table maps that category to 500 for
 * oversized messages and manifests. A WeakMap keeps PlatformError's shape untouched.
 */
const overrides = new WeakMap<object, number>();

export function withHttpStatus<E extends object>(error: E, status: number): E {
  overrides.set(error, status);
  return error;
}

export function httpStatusOverride(error: unknown): number | undefined {
  return typeof error === 'object' && error !== null ? overrides.get(error) : undefined;
}
