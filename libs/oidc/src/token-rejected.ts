/**
 * Why a token was refused. Every reason but `no_role` and `keys_unavailable` means "no valid
 * credential" (401); `no_role` is a valid identity without a role this service grants (403);
 * `keys_unavailable` is the issuer's discovery or JWKS endpoint failing (an upstream fault).
 */
export type TokenRejection =
  | 'malformed'
  | 'algorithm_not_allowed'
  | 'unknown_key'
  | 'bad_signature'
  | 'wrong_issuer'
  | 'wrong_audience'
  | 'expired'
  | 'not_yet_valid'
  | 'missing_claim'
  | 'not_an_access_token'
  | 'unknown_issuer'
  | 'no_role'
  | 'keys_unavailable';

/**
 * A refused token. The message says why in words a client can act on and never contains the
 * token (nor any part of it beyond a claim name), so it is safe to log and to send back.
 */
export class TokenRejectedError extends Error {
  /** The verified `sub` of a token refused for its role (`no_role`) only: who was refused. */
  readonly subject: string | undefined;

  constructor(
    readonly reason: TokenRejection,
    message: string,
    options?: { cause?: unknown; subject?: string },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TokenRejectedError';
    this.subject = options?.subject;
  }
}

export function isTokenRejected(error: unknown): error is TokenRejectedError {
  return error instanceof TokenRejectedError;
}
