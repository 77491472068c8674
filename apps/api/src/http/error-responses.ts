import { ErrorEnvelope, FlatError } from '@agent-platform/contracts';
import { Type } from 'typebox';

/**
 * Error responses of the invocation routes, for their OpenAPI description. A 403 is either the
 * flat role refusal (spec §Authentication rule 6) or a licence refusal in the envelope (D7), so
 * it declares both: a response schema that refused the flat body would turn it into a 500.
 */
export const INVOCATION_ERRORS = {
  400: ErrorEnvelope,
  403: Type.Union([ErrorEnvelope, FlatError]),
  404: ErrorEnvelope,
  // An idempotency key reused for another request; a state-changing tool call in doubt (docs/tools.md).
  409: ErrorEnvelope,
  429: ErrorEnvelope,
  500: ErrorEnvelope,
  502: ErrorEnvelope,
} as const;

/**
 * Error responses of the resource-management routes (integrations, channels): a 403 is the flat
 * role refusal or a refusal in the envelope (PermissionDenied), 409 a duplicate or a conflict.
 */
export const MANAGE_ERRORS = {
  400: ErrorEnvelope,
  403: Type.Union([ErrorEnvelope, FlatError]),
  404: ErrorEnvelope,
  409: ErrorEnvelope,
  500: ErrorEnvelope,
} as const;
