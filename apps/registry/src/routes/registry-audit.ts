import { createAuditTrail, type AuditRecordInput } from '@agent-platform/domain';
import type { RegistryAuthDeps } from './registry-route.ts';

/**
 * How the registry's routes append to the platform's audit trail (tokens, teams, trusted
 * publishing): one trail per route group, `[audit] enabled` read at each append so that a config
 * reload applies to the next one.
 */
export function registryAudit(deps: Pick<RegistryAuthDeps, 'store' | 'clock' | 'auditEnabled'>): (entry: AuditRecordInput) => Promise<unknown> {
  const trail = createAuditTrail({ store: deps.store, clock: deps.clock, enabled: true });
  return async (entry) => ((deps.auditEnabled?.() ?? true) ? trail.record(entry) : null);
}
