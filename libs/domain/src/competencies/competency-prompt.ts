import type { Store } from '@agent-platform/store';
import type { CompetencyRecord } from '../catalog/catalog-records.ts';
import { competencySettings, effectiveSettings, renderSettings, settingsId } from './competency-settings.ts';

/**
 * The competency as `agentId` sees it: its prompt with `{{settings.<key>}}` replaced by the
 * agent's effective values (set, else default). A competency without settings is returned as is.
 */
export async function withSettings(
  store: Store,
  agentId: string,
  competency: CompetencyRecord,
): Promise<CompetencyRecord> {
  if (competency.settings.length === 0) return competency;
  const stored = (await competencySettings(store).get(settingsId(agentId, competency.id)))?.doc.values ?? {};
  return {
    ...competency,
    prompt: renderSettings(competency.prompt, effectiveSettings(competency.settings, stored)),
  };
}
