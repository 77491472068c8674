import {
  AuditAppendBody,
  AuditCheckpointList,
  AuditCheckpointQuerystring,
  AuditCheckpointView,
  AuditCheckpointWriteBody,
  AuditAppendResponse,
  AuditEntryList,
  AuditQuerystring,
  ErrorEnvelope,
  SecurityStatus,
  VerifyQuerystring,
  VerifyResponse,
  type AuditEntryView,
  type PlatformConfig,
} from '@agent-platform/contracts';
import { Errors } from '@agent-platform/domain';
import type { RoutePlugin } from '../api-app.ts';
import type { ApiDeps } from '../deps.ts';

const TAGS = ['security'];

/** `[auth] mode` in the words of GET /security/status (spec §Security, audit and vault). */
const AUTH_MODE: Record<PlatformConfig['auth']['mode'], SecurityStatus['auth_mode']> = {
  disabled: 'none',
  local: 'api-key',
  oidc: 'oidc',
};

/** GET /security/audit (and the MCP search_audit tool): `limit` checked against the configured maximum. */
export async function searchAudit(
  deps: Pick<ApiDeps, 'audit' | 'config'>,
  { limit, category, actor, since }: { limit: number; category?: string | undefined; actor?: string | undefined; since?: string | undefined },
): Promise<AuditEntryView[]> {
  // The maximum is configuration (reloadable), so it is checked here rather than in the schema.
  const max = deps.config.current().audit.max_query_limit;
  if (limit > max) {
    throw Errors.validation(`query parameter 'limit' must be at most ${max} ([audit] max_query_limit)`, {
      field: 'limit',
      maximum: max,
    });
  }
  const query = {
    limit,
    ...(category === undefined ? {} : { category }),
    ...(actor === undefined ? {} : { actor }),
  };
  return deps.audit.query(since === undefined ? query : { ...query, since });
}

/**
 * GET /security/status, /security/audit, /security/verify, GET/POST /security/checkpoints and POST /audit/append. The pipeline's
 * audit hook also records each POST /audit/append request (action `POST /audit/append`); the
 * entry written here is the caller's event itself (action `audit.append:<event_type>`).
 */
export const securityRoutes: RoutePlugin = (app, deps) => {
  app.get(
    '/security/status',
    {
      config: { action: 'SecurityRead' },
      schema: {
        tags: TAGS,
        summary: 'Audit, authentication and TLS posture',
        response: { 200: SecurityStatus },
      },
    },
    async () => {
      const config = deps.config.current();
      return {
        audit_enabled: deps.audit.enabled,
        audit_entries: await deps.audit.count(),
        auth_mode: AUTH_MODE[config.auth.mode],
        tls_enabled: config.server.tls !== undefined,
      };
    },
  );

  app.get(
    '/security/audit',
    {
      config: { action: 'SecurityAudit' },
      schema: {
        tags: TAGS,
        summary: 'Audit entries, newest first',
        querystring: AuditQuerystring,
        response: { 200: AuditEntryList, 400: ErrorEnvelope },
      },
    },
    async (request) => ({ entries: await searchAudit(deps, request.query) }),
  );

  app.get(
    '/security/verify',
    {
      config: { action: 'SecurityRead' },
      schema: {
        tags: TAGS,
        summary: 'Recompute and check the audit hash chain (after what this node verified before, or all of it with full=true)',
        querystring: VerifyQuerystring,
        response: { 200: VerifyResponse, 400: ErrorEnvelope },
      },
    },
    // A broken chain is a 200 report with valid: false, never an error status (spec).
    async (request) => deps.audit.verify({ full: request.query.full }),
  );

  app.get(
    '/security/checkpoints',
    {
      config: { action: 'SecurityAudit' },
      schema: {
        tags: TAGS,
        summary: 'Signed audit checkpoints written to [audit.checkpoints] sink, newest first, and the key that verifies them',
        querystring: AuditCheckpointQuerystring,
        response: { 200: AuditCheckpointList, 400: ErrorEnvelope },
      },
    },
    async (request) => ({
      enabled: deps.auditCheckpoints.configured,
      key_id: deps.auditCheckpoints.publicKey.key_id,
      public_key: deps.auditCheckpoints.publicKey.public_key,
      checkpoints: await deps.auditCheckpoints.list(request.query.limit),
    }),
  );

  app.post(
    '/security/checkpoints',
    {
      config: { action: 'AuditCheckpoint', audit: 'audit' },
      schema: {
        tags: TAGS,
        summary: 'Write a signed checkpoint of the audit chain to the external sink now',
        body: AuditCheckpointWriteBody,
        response: { 201: AuditCheckpointView, 409: ErrorEnvelope },
      },
    },
    async (request, reply) => {
      const reason = request.body?.supersede_reason;
      return reply.code(201).send(await deps.auditCheckpoints.write(reason === undefined ? {} : { supersede: reason }));
    },
  );

  app.post(
    '/audit/append',
    {
      config: { action: 'AuditWrite', audit: 'audit' },
      schema: {
        tags: TAGS,
        summary: 'Record an event in the audit trail',
        body: AuditAppendBody,
        response: { 201: AuditAppendResponse, 409: ErrorEnvelope },
      },
    },
    async (request, reply) => {
      const { event_type, agent_id, detail } = request.body;
      const entry = await deps.audit.record({
        category: 'audit',
        identity: request.caller.identity,
        role: request.caller.role,
        action: `audit.append:${event_type}`,
        target: agent_id ?? '-',
        result: 'recorded',
        metadata: detail === undefined ? null : { detail },
      });
      if (entry === null)
        throw Errors.conflict('audit trail is disabled ([audit] enabled = false); nothing was recorded');
      return reply.code(201).send({ status: 'recorded' as const, event_type });
    },
  );
};
