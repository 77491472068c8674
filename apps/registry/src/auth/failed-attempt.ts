import { Errors, type AuthBackoff } from '@agent-platform/domain';
import type { FastifyRequest } from 'fastify';

/**
 * A failed authentication attempt (docs/registry-auth.md "Failed attempts"): 429 while the client
 * is locked out (not counted again), else counted towards its lockout, logged with the reason, the
 * client and the route (never the credential), and answered 401 with `message`. The auth hook and
 * the trusted-publishing exchange (whose credential is in its body) both count through here.
 */
export async function failedAttempt(
  request: FastifyRequest,
  deps: { backoff: AuthBackoff; logger: { warn(object: Record<string, unknown>, message: string): void } },
  reason: string,
  message: string,
): Promise<never> {
  // The peer address (a unix-socket listener has none: its clients share one bucket, as in the api).
  const client = request.ip || 'unix-socket';
  const lockedFor = await deps.backoff.lockedFor(client);
  if (lockedFor > 0) throw Errors.rateLimited(`too many failed authentication attempts from ${client}: retry in ${lockedFor} s`, lockedFor);
  await deps.backoff.recordFailure(client);
  deps.logger.warn({ reason, client_address: client, method: request.method, url: request.routeOptions.url ?? 'unmatched' }, 'registry authentication failed');
  throw Errors.unauthenticated(message);
}
