import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiDeps } from '../deps.ts';
import { wasRoleDenied } from './authorize.ts';
import { pathOf, routeLabel } from './route-label.ts';

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Audits every mutating request that passed authentication, and every role denial (category
 * `access`), with method + route pattern, the concrete path and the status. Never the body.
 *
 * An onSend hook, awaited before the response is written: a client that got its response can
 * immediately find the entry in GET /security/audit. Failed authentications are audited by the
 * authentication hook (they have no caller), so they are not recorded twice. A route declaring
 * `audit: false` (a public route anyone can call: POST /channels/{id}/inbound) is never audited.
 */
export function auditHook(deps: ApiDeps) {
  return async function audit(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
    const denied = wasRoleDenied(request);
    const caller = request.caller as typeof request.caller | null;
    const category = request.routeOptions.config.audit;
    if (caller === null || category === false || (!denied && !MUTATING.has(request.method))) return payload;
    try {
      await deps.audit.record({
        category: denied ? 'access' : (category ?? 'request'),
        identity: caller.identity,
        role: caller.role,
        action: `${request.method} ${routeLabel(request)}`,
        target: pathOf(request),
        result: String(reply.statusCode),
        metadata: { request_id: request.id, ...request.auditMetadata },
      });
    } catch (error) {
      // The response still goes out: the operator sees the failure in the log and the metrics.
      request.log.error({ err: error }, 'audit append failed');
    }
    return payload;
  };
}
