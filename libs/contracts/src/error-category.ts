import { Type, type Static } from 'typebox';

/**
 * Every error category the platform puts on the wire (spec §Errors), plus the route-local
 * strings the spec also uses. Closed: adding one means adding its HTTP status in the api's
 * error handler, which the compiler enforces through `Record<ErrorCategory, number>`.
 */
export const ERROR_CATEGORIES = [
  'NotFound',
  'ValidationError',
  'UnsupportedMediaType',
  'InvalidState',
  'MissingDependency',
  'PermissionDenied',
  'TrustPolicyViolation',
  'Duplicate',
  'SizeLimitExceeded',
  'Timeout',
  'MemoryViolation',
  'ProviderError',
  'RateLimited',
  'DuplicateInvocation',
  'AuthenticationError',
  'AuthorizationError',
  'InitError',
  'Internal',
  // Route-local categories named by the spec.
  'CatalogError',
  'ActivationError',
  'Conflict',
  'AuthError',
  'ConfigError',
  'InternalError',
  // Not in the spec's table: a body that is not JSON or has a field of the wrong type (422).
  'MalformedBody',
  // Not in the spec's table: a request cut off by the surface timeout (408).
  'RequestTimeout',
] as const;

export type ErrorCategory = (typeof ERROR_CATEGORIES)[number];

/** The error envelope of spec §Errors: `{error: {category, message, details?}}`. */
export const ErrorEnvelope = Type.Object({
  error: Type.Object({
    category: Type.String(),
    message: Type.String(),
    details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  }),
});
export type ErrorEnvelope = Static<typeof ErrorEnvelope>;

/** The flat bodies the spec keeps for role failures and a few legacy cases. */
export const FlatError = Type.Object({
  error: Type.String(),
  message: Type.Optional(Type.String()),
});
export type FlatError = Static<typeof FlatError>;
