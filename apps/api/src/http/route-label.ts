import type { FastifyRequest } from 'fastify';

/**
 * The route pattern that matched (`/agents/:id`), or `unmatched`: used for metric labels and
 * audit actions so that ids in URLs never explode label cardinality.
 */
export function routeLabel(request: FastifyRequest): string {
  return request.is404 ? 'unmatched' : (request.routeOptions.url ?? 'unmatched');
}

/** The concrete path without the query string (query strings may carry anything). */
export function pathOf(request: FastifyRequest): string {
  return request.url.split('?')[0] ?? '';
}
