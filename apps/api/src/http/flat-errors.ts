import type { FlatError } from '@agent-platform/contracts';
import type { FastifyRequest } from 'fastify';
import { missingFields, type SchemaError } from './schema-errors.ts';

/**
 * The spec's one flat 400 (§Errors: "the 400 missing `agent_id` on `POST /cron/jobs` use
 * `{error: <string>}`"). A route lists the body fields whose absence is answered that way in
 * `config.flatWhenMissing`; every other error of the route keeps the envelope. A request with no
 * body at all lacks those fields too.
 */
export function flatErrorFor(request: FastifyRequest, error: unknown): FlatError | null {
  const fields = request.routeOptions.config.flatWhenMissing;
  if (fields === undefined || fields.length === 0) return null;
  const validation =
    typeof error === 'object' && error !== null
      ? (error as { validation?: unknown; validationContext?: unknown })
      : null;
  if (!Array.isArray(validation?.validation) || (validation.validationContext ?? 'body') !== 'body')
    return null;
  const missing = missingFields(validation.validation as SchemaError[]);
  const field = missing.includes('') ? fields[0] : fields.find((f) => missing.includes(f));
  return field === undefined ? null : { error: `missing required field '${field}'` };
}
