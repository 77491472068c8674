import { PlatformError } from './platform-error.ts';

/**
 * Factories for the errors the platform raises, so that messages stay uniform and greppable.
 * Add a factory here rather than calling `new PlatformError` with ad-hoc text.
 */
export const Errors = {
  notFound: (kind: string, id: string) =>
    new PlatformError('NotFound', `${kind} '${id}' not found`, { details: { kind, id } }),
  invalidId: (kind: string, value: string) =>
    new PlatformError('ValidationError', `invalid ${kind} id '${truncate(value)}': must be a UUID`, {
      details: { kind, value: truncate(value) },
    }),
  validation: (message: string, details?: Record<string, unknown>) =>
    new PlatformError('ValidationError', message, details === undefined ? {} : { details }),
  malformedBody: (message: string, details?: Record<string, unknown>) =>
    new PlatformError('MalformedBody', message, details === undefined ? {} : { details }),
  unsupportedMediaType: (contentType: string) =>
    new PlatformError(
      'UnsupportedMediaType',
      `unsupported content type '${truncate(contentType)}': send application/json`,
    ),
  bodyTooLarge: (declared: number, limit: number) =>
    new PlatformError('SizeLimitExceeded', `request body of ${declared} bytes is over the limit of ${limit} bytes`, {
      details: { declared_bytes: declared, limit_bytes: limit },
    }),
  requestTimeout: (secs: number) =>
    new PlatformError('RequestTimeout', `request exceeded the ${secs} s request timeout`),
  invalidState: (message: string, details?: Record<string, unknown>) =>
    new PlatformError('InvalidState', message, details === undefined ? {} : { details }),
  duplicate: (kind: string, id: string) =>
    new PlatformError('Duplicate', `${kind} '${id}' already exists`, { details: { kind, id } }),
  conflict: (message: string, details?: Record<string, unknown>) =>
    new PlatformError('Conflict', message, details === undefined ? {} : { details }),
  unauthenticated: (message: string) => new PlatformError('AuthError', message),
  /** `details.retry_after_secs` carries the wait across a bus hop, where only category, message and details travel. */
  rateLimited: (message: string, retryAfterSecs: number, details?: Record<string, unknown>) =>
    new PlatformError('RateLimited', message, { retryAfterSecs, retryable: true, details: { ...details, retry_after_secs: retryAfterSecs } }),
  permissionDenied: (message: string, details?: Record<string, unknown>) =>
    new PlatformError('PermissionDenied', message, details === undefined ? {} : { details }),
  config: (message: string, details?: Record<string, unknown>) =>
    new PlatformError('ConfigError', message, details === undefined ? {} : { details }),
  timeout: (message: string) => new PlatformError('Timeout', message, { retryable: true }),
  /**
   * An invoke idempotency key already processed (spec: "returns the cached result as an error
   * body with category DuplicateInvocation and HTTP 200"): the recorded result is `details.result`.
   */
  duplicateInvocation: (key: string, result: Record<string, unknown>) =>
    new PlatformError('DuplicateInvocation', `idempotency key '${truncate(key)}' was already processed; details.result holds its result`, {
      details: { idempotency_key: key, result },
    }),
  /** A model provider failed or refused (502). Not retryable: the adapter already spent its retries. */
  provider: (providerId: string, message: string, details?: Record<string, unknown>) =>
    new PlatformError('ProviderError', `provider '${providerId}': ${message}`, { details: { provider: providerId, ...details } }),
  /** A model provider did not connect or answer in time. Not retryable: waiting again costs as much. */
  providerTimeout: (providerId: string, message: string, details?: Record<string, unknown>) =>
    new PlatformError('Timeout', `provider '${providerId}': ${message}`, { details: { provider: providerId, ...details } }),
  unavailable: (what: string, cause?: unknown) =>
    new PlatformError('Internal', `${what} is unavailable`, { cause, retryable: true }),
  internal: (message: string, cause?: unknown) => new PlatformError('Internal', message, { cause }),
  /** A package install or uninstall the catalog refuses (400, route-local category). */
  catalog: (message: string, details?: Record<string, unknown>) =>
    new PlatformError('CatalogError', message, details === undefined ? {} : { details }),
  /** A mandatory package dependency is neither installed nor found (500 per the spec's table). */
  missingDependency: (message: string, details?: Record<string, unknown>) =>
    new PlatformError('MissingDependency', message, details === undefined ? {} : { details }),
  /** An agent cannot become Running (route-local category, 500). */
  activation: (message: string, details?: Record<string, unknown>) =>
    new PlatformError('ActivationError', message, details === undefined ? {} : { details }),
};

function truncate(value: string, max = 80): string {
  return value.length > max ? `${value.slice(0, max)}…` : value;
}
