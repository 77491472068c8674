import { Errors } from '@agent-platform/domain';
import type { FastifyRequest } from 'fastify';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Spec §Errors case rule 1: a path id that is not a UUID is 400 `ValidationError` naming the id
 * kind ("invalid agent id ..."). Runs in preValidation, before schema validation of params, so
 * the message is this one rather than a generic pattern failure.
 */
export async function uuidParamsHook(request: FastifyRequest): Promise<void> {
  const ids = request.routeOptions.config.ids;
  if (ids === undefined) return;
  const params = request.params as Record<string, string | undefined>;
  for (const [param, kind] of Object.entries(ids)) {
    const value = params[param];
    if (value !== undefined && !UUID.test(value)) throw Errors.invalidId(kind, value);
  }
}
