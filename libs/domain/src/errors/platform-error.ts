import type { ErrorCategory } from '@agent-platform/contracts';

export interface PlatformErrorOptions {
  details?: Record<string, unknown>;
  cause?: unknown;
  /** True when trying the same operation again later may succeed (bus/queue adapters nak it). */
  retryable?: boolean;
  /** Seconds a client should wait; becomes the Retry-After header for RateLimited. */
  retryAfterSecs?: number;
}

/**
 * The one error type the platform throws on purpose. Domain code never sees HTTP status codes:
 * the api maps `category` to a status in exactly one place (apps/api error handler).
 */
export class PlatformError extends Error {
  readonly category: ErrorCategory;
  readonly details: Record<string, unknown> | undefined;
  readonly retryable: boolean;
  readonly retryAfterSecs: number | undefined;

  constructor(category: ErrorCategory, message: string, options: PlatformErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'PlatformError';
    this.category = category;
    this.details = options.details;
    this.retryable = options.retryable ?? false;
    this.retryAfterSecs = options.retryAfterSecs;
  }

  /** Wire form, safe to cross a process boundary (bus replies) and to return over HTTP. */
  toJSON(): { category: ErrorCategory; message: string; details?: Record<string, unknown> } {
    return this.details === undefined
      ? { category: this.category, message: this.message }
      : { category: this.category, message: this.message, details: this.details };
  }

  static is(value: unknown): value is PlatformError {
    return value instanceof PlatformError;
  }
}
