import { can } from '@agent-platform/domain';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Requests refused by the role check; the audit hook files them under category `access`. */
const denied = new WeakSet<FastifyRequest>();

export function wasRoleDenied(request: FastifyRequest): boolean {
  return denied.has(request);
}

/**
 * The role check (spec §Authentication rule 6): 403 with the FLAT body
 * `{error: "forbidden", message}` naming role and action. Runs in onRequest, after authentication
 * and before the body is read, so an unauthorized caller sees 403 rather than 415 or 422 for a
 * bad body (spec "Rules of the model" 5, §Errors case rule 3).
 */
export async function authorizeHook(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
  const action = request.routeOptions.config.action;
  if (action === undefined || action === 'public' || action === 'authenticated') return undefined;
  if (can(request.caller.role, action)) return undefined;
  denied.add(request);
  // Returning the reply tells Fastify the hook answered: no later hook, parser or handler runs.
  return reply.code(403).send({ error: 'forbidden', message: `role ${request.caller.role} may not perform ${action}` });
}
