import type { ErrorCategory } from '@agent-platform/contracts';

/**
 * THE mapping from error category to HTTP status: a copy of spec §Errors, table and route-local
 * categories. Entries that look wrong (InvalidState 500, DuplicateInvocation 200, Duplicate 500,
 * SizeLimitExceeded 500, MissingDependency 500, the reserved AuthenticationError and
 * AuthorizationError 500) are the spec's and must not be "fixed": clients depend on them. The
 * one exception, a body over the size limit, is a per-error override (http-status.ts, D7).
 * The compiler keeps this table complete: a new category does not build without its status.
 */
export const STATUS: Record<ErrorCategory, number> = {
  NotFound: 404,
  ValidationError: 400,
  UnsupportedMediaType: 415,
  InvalidState: 500,
  MissingDependency: 500,
  PermissionDenied: 403,
  TrustPolicyViolation: 403,
  Duplicate: 500,
  SizeLimitExceeded: 500,
  Timeout: 500,
  MemoryViolation: 503,
  ProviderError: 502,
  RateLimited: 429,
  DuplicateInvocation: 200,
  AuthenticationError: 500,
  AuthorizationError: 500,
  InitError: 500,
  Internal: 500,
  // Route-local categories. The spec names them without a table row; statuses follow its
  // "Other status codes" list: 409 conflict, 400 validation-like failures, 401 (D7).
  CatalogError: 400,
  ActivationError: 500,
  Conflict: 409,
  AuthError: 401,
  ConfigError: 400,
  InternalError: 500,
  // Ours: spec "Other status codes" 422 (malformed JSON or wrong field type) and 408 (timeout).
  MalformedBody: 422,
  RequestTimeout: 408,
};
