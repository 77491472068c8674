import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RequestAuditEntry } from '@agent-platform/contracts';
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
 *
 * An invocation route hands its entry, as it reads on success, to the agent worker
 * (`withWorkerAudit`), which appends it in the same commit as the answer's bookkeeping; when the
 * reply says it did and the response carries that status, there is nothing
 * left to write here. Any other status (the worker's error, a duplicate, a failure after the
 * answer) is written here as before (docs/audit.md "Who writes an entry").
 */
export function auditHook(deps: ApiDeps) {
  return async function audit(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
    const result = String(reply.statusCode);
    if (request.auditedAs === result) return payload;
    const entry = entryOf(request, result);
    if (entry === null) return payload;
    try {
      await deps.audit.record(entry);
    } catch (error) {
      // The response still goes out: the operator sees the failure in the log and the metrics.
      request.log.error({ err: error }, 'audit append failed');
    }
    return payload;
  };
}

/** The request's entry with `result`, or null when the request is not audited. */
function entryOf(request: FastifyRequest, result: string): RequestAuditEntry | null {
  const denied = wasRoleDenied(request);
  const caller = request.caller as typeof request.caller | null;
  const category = request.routeOptions.config.audit;
  if (caller === null || category === false || (!denied && !MUTATING.has(request.method))) return null;
  return {
    category: denied ? 'access' : (category ?? 'request'),
    identity: caller.identity,
    role: caller.role,
    action: `${request.method} ${routeLabel(request)}`,
    target: pathOf(request),
    result,
    metadata: { request_id: request.id, ...request.auditMetadata },
  };
}

/** The status an invocation route answers a fresh answer with: the entry the worker appends reads it. */
const ANSWERED = '200';

/**
 * Runs `invoke` with the request's audit entry as it reads when answered (undefined when the
 * request is not audited), for the agent worker to append with its answer (`agents.invoke`
 * `audit_entry`); when the reply says it did (`audited`), the hook skips a 200.
 */
export async function withWorkerAudit<R extends { audited?: boolean }>(
  request: FastifyRequest,
  invoke: (auditEntry: RequestAuditEntry | undefined) => Promise<R>,
): Promise<R> {
  const answer = await invoke(entryOf(request, ANSWERED) ?? undefined);
  if (answer.audited === true) request.auditedAs = ANSWERED;
  return answer;
}
