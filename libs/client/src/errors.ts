/**
 * The spec's error envelope, the body of every error response but three (docs/http.md "Errors"):
 * `category` names the kind of failure (`NotFound`, `ValidationError`, `AuthError`, ...) and
 * decides the status; `details` carries what the category documents (a field name, problems).
 */
export interface ErrorEnvelope {
  error: { category: string; message: string; details?: Record<string, unknown> };
}

/**
 * The spec's flat error bodies: the 403 role refusal `{error: "forbidden", message}` (the key's
 * role may not do this), the 503 `{error: "Auth is not enabled"}` of the key routes, and the 400
 * for a missing `agent_id` on POST /cron/jobs.
 */
export interface FlatError {
  error: string;
  message?: string;
}

/** Any error body the platform answers. */
export type PlatformErrorBody = ErrorEnvelope | FlatError;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The body in the envelope shape, else null. */
export function asErrorEnvelope(body: unknown): ErrorEnvelope | null {
  if (!isRecord(body) || !isRecord(body.error)) return null;
  const { category, message, details } = body.error;
  if (typeof category !== 'string' || typeof message !== 'string') return null;
  if (details !== undefined && !isRecord(details)) return null;
  return body as unknown as ErrorEnvelope;
}

/** The body in the flat shape, else null. */
export function asFlatError(body: unknown): FlatError | null {
  if (!isRecord(body) || typeof body.error !== 'string') return null;
  if (body.message !== undefined && typeof body.message !== 'string') return null;
  return body as unknown as FlatError;
}

/**
 * An error response of the platform, thrown by `unwrap`. Every error the platform answers has
 * one of the two shapes above; one that has neither (a proxy's HTML 502, an empty body) keeps
 * its status with category `HttpError` and the text as `body`.
 */
export class PlatformApiError extends Error {
  override readonly name = 'PlatformApiError';
  /** The HTTP status. */
  readonly status: number;
  /** The envelope's category; for a flat body its `error` (`forbidden`); otherwise `HttpError`. */
  readonly category: string;
  /** The envelope's `details`, when it has them. */
  readonly details: Record<string, unknown> | undefined;
  /** The body as it came: an `ErrorEnvelope`, a `FlatError`, or what else the server sent. */
  readonly body: unknown;
  /** True for the flat shape (the 403 role refusal and the two others). */
  readonly flat: boolean;
  /** `X-Request-Id` of the response: the id of the request's log line and audit entry. */
  readonly requestId: string | undefined;

  constructor(status: number, body: unknown, requestId?: string | null) {
    const envelope = asErrorEnvelope(body);
    const flat = envelope === null ? asFlatError(body) : null;
    const message =
      envelope?.error.message ??
      flat?.message ??
      flat?.error ??
      (typeof body === 'string' && body !== '' ? body : `HTTP ${status}`);
    super(message);
    this.status = status;
    this.category = envelope?.error.category ?? flat?.error ?? 'HttpError';
    this.details = envelope?.error.details;
    this.body = body;
    this.flat = flat !== null;
    this.requestId = requestId ?? undefined;
  }

  /** The 403 role refusal: this key's role may not perform the action (docs/permissions.md). */
  get isRoleRefusal(): boolean {
    return this.status === 403 && this.flat && this.category === 'forbidden';
  }
}
