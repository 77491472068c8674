/**
 * A registry call that failed: unreachable, too slow, a 5xx, a refusal, or an answer that is not
 * the wire format (docs/catalog.md "Errors"). Its category is `ProviderError`, which the api's one
 * error handler answers 502 (spec §Errors: "502 upstream provider or registry error"); like
 * libs/config's ConfigError it carries the category itself, so this library needs no domain import.
 * `status` is the registry's HTTP status when it answered, else null.
 */
export class RegistryRequestError extends Error {
  readonly category = 'ProviderError' as const;
  readonly details: Record<string, unknown>;
  readonly retryable: boolean;
  readonly status: number | null;

  constructor(message: string, options: { status: number | null; details: Record<string, unknown>; retryable: boolean; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RegistryRequestError';
    this.status = options.status;
    this.details = options.details;
    this.retryable = options.retryable;
  }

  toJSON(): { category: 'ProviderError'; message: string; details: Record<string, unknown> } {
    return { category: this.category, message: this.message, details: this.details };
  }
}
