import type { EvidenceKind } from './evidence-kind.ts';
import {
  auditActivity,
  auditChain,
  auditCheckpoints,
  auditEnabled,
  auditRetention,
} from './kinds/audit-kinds.ts';
import { authEnforced, keyExpiry, roleAssigned, tlsEnabled } from './kinds/auth-kinds.ts';
import {
  humanEscalation,
  licenceBudgets,
  packageInventory,
  packagesSigned,
  vaultInUse,
} from './kinds/platform-kinds.ts';
import { forcedLocalRouting, piiTokenisation } from './kinds/privacy-kinds.ts';
import { providerInventory } from './kinds/vendor-kinds.ts';

/**
 * The closed catalogue of evidence kinds a pack may name (docs/compliance.md "Evidence kinds").
 * A new kind is added here, documented there, and given a test of each status it can give.
 */
export const EVIDENCE_KINDS: readonly EvidenceKind[] = [
  auditEnabled,
  auditChain,
  auditCheckpoints,
  auditRetention,
  auditActivity,
  authEnforced,
  roleAssigned,
  keyExpiry,
  tlsEnabled,
  packageInventory,
  packagesSigned,
  licenceBudgets,
  providerInventory,
  vaultInUse,
  humanEscalation,
  piiTokenisation,
  forcedLocalRouting,
];

const BY_KIND = new Map(EVIDENCE_KINDS.map((k) => [k.kind, k]));

export function evidenceKindOf(kind: string): EvidenceKind | undefined {
  return BY_KIND.get(kind);
}
