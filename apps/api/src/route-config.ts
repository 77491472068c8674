import type { Action } from '@agent-platform/contracts';
import type { AuditCategory, Caller } from '@agent-platform/domain';

/**
 * What a route declares about itself in `config`, read by the shared hooks:
 * - `action`: the permission checked after authentication (spec §Authentication), `'public'`
 *   for no authentication at all (only GET /health), `'authenticated'` for any caller with a
 *   valid credential and no role gate (/auth/check, /auth/whoami, /auth/logout).
 * - `ids`: path params that must be UUIDs, with the id kind named in the 400 message
 *   (spec §Errors case rule 1), e.g. `{ id: 'agent' }`.
 * - `bootstrap`: this route may be called without a credential while the key store is empty
 *   (POST /auth/keys only; spec §Authentication rule 3).
 * - `audit`: the audit category for this mutating route; defaults to `request`. `false`: never
 *   audited, for a public route anyone may call as often as they like (POST /channels/{id}/inbound),
 *   so that strangers cannot fill the append-only trail; such a route keeps its own record. /mcp
 *   too: it audits each tool call itself (mcp/tool-call.ts), not each JSON-RPC request.
 * - `flatWhenMissing`: body fields whose absence is answered with the flat `{error}` body instead
 *   of the envelope (spec §Errors: only `agent_id` on POST /cron/jobs; http/flat-errors.ts).
 */
export interface RouteAccess {
  action: Action | 'public' | 'authenticated';
  ids?: Record<string, string>;
  bootstrap?: boolean;
  audit?: AuditCategory | false;
  flatWhenMissing?: readonly string[];
}

declare module 'fastify' {
  // Declaration merging: the empty body is the point, it adds RouteAccess to Fastify's type.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface FastifyContextConfig extends Partial<RouteAccess> {}
  interface FastifyRequest {
    /** Set by the authentication hook before routing; always present in handlers. */
    caller: Caller;
    /** The client's address (http/client-address.ts): the peer, or the client a trusted proxy names. */
    clientAddress: string;
    /**
     * Facts a handler adds to its request's audit entry (never a body or a secret): the run a
     * POST /workflows/{id}/run started and its business key, so a legal hold on the key finds the
     * entry (docs/retention.md). Null for most routes.
     */
    auditMetadata: Record<string, string> | null;
    /**
     * The result (HTTP status) of the request's audit entry when another process already
     * appended it (the agent worker, with its answer: http/audit-hook.ts); null: not yet written.
     */
    auditedAs: string | null;
  }
}
