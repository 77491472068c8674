import type { Caller } from '@agent-platform/domain';
import type { FastifyBaseLogger } from 'fastify';
import type { ApiDeps } from '../deps.ts';
import type { AgentInvoker } from '../invocation/agent-invoker.ts';

/** What a tool handler works with: the request's caller and the api's deps, never HTTP. */
export interface ToolContext {
  deps: ApiDeps;
  caller: Caller;
  /** The HTTP request's id: the correlation id of invocations, `request_id` in audit metadata. */
  requestId: string;
  /** Aborted when the client goes away: an invocation in flight is cancelled on its worker. */
  signal: AbortSignal;
  invoker: AgentInvoker;
  log: FastifyBaseLogger;
}

/**
 * Where a state-changing call is recorded in the audit trail, filled in by the handler as soon
 * as it knows (a failure after resolving the agent still names it).
 */
export interface AuditNote {
  /** The path of the equivalent HTTP route (`/agents/<id>/send`), `/mcp` until resolved. */
  target: string;
  metadata: Record<string, unknown>;
}

/** One tool's work: arguments already validated against its input schema, role already checked. */
export type ToolHandler<In> = (
  context: ToolContext,
  args: In,
  note: AuditNote,
) => Promise<Record<string, unknown>>;

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
