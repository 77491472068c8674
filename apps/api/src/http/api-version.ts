import { Errors } from '@agent-platform/domain';
import type { FastifyReply, FastifyRequest } from 'fastify';

export const SUPPORTED_API_VERSIONS = ['v1'] as const;
export const CURRENT_API_VERSION = 'v1';

/** Accepted spellings of v1: `v1`, `V1`, `1`. */
function normalizeApiVersion(raw: string): string | null {
  const v = raw.trim().toLowerCase();
  if (v === 'v1' || v === '1') return 'v1';
  return null;
}

/**
 * Spec §Versioning: the version is chosen per request by `Api-Version`; absent means v1, the only
 * version. Anything else is refused with 400 naming the supported versions.
 */
export async function apiVersionHook(request: FastifyRequest): Promise<void> {
  const raw = request.headers['api-version'];
  if (raw === undefined) return;
  const value = Array.isArray(raw) ? raw.join(',') : raw;
  if (normalizeApiVersion(value) === null) {
    throw Errors.validation(`unsupported Api-Version '${value}': supported versions are ${SUPPORTED_API_VERSIONS.join(', ')}`, {
      supported_versions: [...SUPPORTED_API_VERSIONS],
    });
  }
}

/**
 * Every response, errors included, names the version that answered, and the request id that its
 * log line and audit entry carry (so an operator can find them from a client's report).
 */
export async function responseHeadersHook(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  reply.header('api-version', CURRENT_API_VERSION);
  reply.header('x-request-id', request.id);
  return payload;
}
