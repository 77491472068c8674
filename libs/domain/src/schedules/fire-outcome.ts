import { assertAgentRunning } from '../agents/agent-lifecycle.ts';
import type { AgentRecord } from '../agents/agent-record.ts';
import { Errors } from '../errors/errors.ts';
import { PlatformError } from '../errors/platform-error.ts';

/**
 * Why an agent cannot take a fire, or null when it can: unknown (404) or not Running (D9:
 * "a cron fire aimed at a Suspended agent is refused with InvalidState naming the state").
 */
export function agentRefusal(agent: AgentRecord | null, agentId: string): PlatformError | null {
  if (agent === null) return Errors.notFound('agent', agentId);
  try {
    assertAgentRunning(agent);
    return null;
  } catch (error) {
    return error as PlatformError;
  }
}

/** A fire's `reason` text: the category first, so the log reads like the error envelope. */
export function fireReason(category: string, message: string): string {
  return `${category}: ${message}`;
}

/**
 * Categories that answer a request the same way however often it is sent: a fire refused with
 * one is `refused` (never retried); any other failure is `failed`.
 */
const REFUSAL_CATEGORIES = new Set([
  'NotFound',
  'InvalidState',
  'PermissionDenied',
  'TrustPolicyViolation',
  'ValidationError',
  'MalformedBody',
  'SizeLimitExceeded',
  'Conflict',
  'MissingDependency',
]);

/** The recorded outcome and reason of an invocation that threw (a manual run). */
export function failedFire(error: unknown): { outcome: 'refused' | 'failed'; reason: string } {
  if (error instanceof PlatformError) {
    return {
      outcome: REFUSAL_CATEGORIES.has(error.category) ? 'refused' : 'failed',
      reason: fireReason(error.category, error.message),
    };
  }
  return {
    outcome: 'failed',
    reason: fireReason('Internal', error instanceof Error ? error.message : String(error)),
  };
}
