import type { CompetencySetting } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import { Errors } from '../errors/errors.ts';

/**
 * Per-agent values of a competency's `settings` (docs/competencies.md "Settings"), one document
 * per (agent, competency) in collection `competency_settings`. Values are kept as the strings the
 * spec's PUT carries; only keys the operator set are stored, defaults come from the manifest, so
 * a competency upgrade that changes a default reaches every agent that never overrode it.
 */
export interface CompetencySettingsRecord {
  /** `<agent_id>/<competency_id>`. */
  id: string;
  agent_id: string;
  competency_id: string;
  values: Record<string, string>;
  updated_at: string;
}

export const COMPETENCY_SETTINGS_COLLECTION = 'competency_settings';

export function competencySettings(store: Store) {
  return store.collection<CompetencySettingsRecord>(COMPETENCY_SETTINGS_COLLECTION, {
    indexes: [{ field: 'agent_id' }],
  });
}

export const settingsId = (agentId: string, competencyId: string): string => `${agentId}/${competencyId}`;

/** A manifest default as the string the settings routes speak ("" when the setting has none). */
function defaultText(setting: CompetencySetting): string {
  return setting.default === undefined ? '' : String(setting.default);
}

/** Why `value` does not fit `setting`, or null when it does. `value` is already a string. */
function problemOf(setting: CompetencySetting, value: string): string | null {
  switch (setting.type) {
    case 'Select':
      return (setting.values ?? []).includes(value)
        ? null
        : `must be one of ${(setting.values ?? []).join(', ')} (got '${value.slice(0, 40)}')`;
    case 'Toggle':
      return value === 'true' || value === 'false'
        ? null
        : `must be true or false (got '${value.slice(0, 40)}')`;
    case 'Number':
      return value.trim() !== '' && Number.isFinite(Number(value))
        ? null
        : `must be a number (got '${value.slice(0, 40)}')`;
    case 'Text':
      return null;
  }
}

/**
 * The one place tolerated spellings are accepted (house style "normalize*"): the spec sends every
 * value as a string; a JSON boolean for a Toggle and a JSON number for a Number mean the same and
 * are taken as their string. Anything else that is not a string is refused.
 */
function normalizeSettingValue(setting: CompetencySetting, value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (setting.type === 'Toggle' && typeof value === 'boolean') return String(value);
  if (setting.type === 'Number' && typeof value === 'number' && Number.isFinite(value)) return String(value);
  return null;
}

/**
 * The new stored values after `input` (a PUT body), or 400 ValidationError naming each bad key
 * and why (unknown key, wrong type, a Select value not listed). All keys are checked before
 * anything is returned, so a refused PUT changes nothing.
 */
export function applySettingsInput(
  schema: readonly CompetencySetting[],
  current: Readonly<Record<string, string>>,
  input: Readonly<Record<string, unknown>>,
  competencyId: string,
): Record<string, string> {
  const byKey = new Map(schema.map((s) => [s.key, s]));
  const problems: Array<{ key: string; reason: string }> = [];
  const next: Record<string, string> = { ...current };
  for (const [key, raw] of Object.entries(input)) {
    const setting = byKey.get(key);
    if (setting === undefined) {
      const known = schema.map((s) => s.key);
      problems.push({
        key,
        reason: `unknown setting of competency ${competencyId} (its settings: ${known.length === 0 ? 'none' : known.join(', ')})`,
      });
      continue;
    }
    const value = normalizeSettingValue(setting, raw);
    const problem =
      value === null
        ? `must be a string (got ${raw === null ? 'null' : typeof raw})`
        : problemOf(setting, value);
    if (problem !== null || value === null) problems.push({ key, reason: problem ?? 'invalid' });
    else next[key] = value;
  }
  if (problems.length > 0) {
    throw Errors.validation(
      `invalid settings for competency ${competencyId}: ${problems.map((p) => `${p.key}: ${p.reason}`).join('; ')}`,
      { competency_id: competencyId, problems },
    );
  }
  return next;
}

/**
 * Every setting of the schema with its effective value: the stored one when it still fits the
 * current schema (an upgrade may drop a Select value), else the default.
 */
export function effectiveSettings(
  schema: readonly CompetencySetting[],
  stored: Readonly<Record<string, string>>,
): Record<string, string> {
  const values: Record<string, string> = {};
  for (const setting of schema) {
    const value = stored[setting.key];
    values[setting.key] =
      value !== undefined && problemOf(setting, value) === null ? value : defaultText(setting);
  }
  return values;
}

const PLACEHOLDER = /\{\{\s*settings\.([A-Za-z0-9_.-]+)\s*\}\}/g;

/**
 * The competency body with `{{settings.<key>}}` replaced by the agent's effective value. A
 * placeholder naming no setting of the schema is left as written, so an author's typo shows in
 * the prompt instead of silently vanishing.
 */
export function renderSettings(prompt: string, values: Readonly<Record<string, string>>): string {
  return prompt.replace(PLACEHOLDER, (whole, key: string) => values[key] ?? whole);
}
