import { EVENT_KINDS, type EventKind, type PlatformEvent, type TriggerPattern } from '@agent-platform/contracts';
import { Errors } from '../errors/errors.ts';

/**
 * Trigger pattern keys (docs/events.md "Pattern keys"). The spec shows two: `lifecycle` (any agent
 * lifecycle event) and `agent_spawned` (an agent installed, `name_pattern` with `*` wildcards).
 * Ours: one key per event kind, the kind with `.` turned into `_` (`invocation_failed`).
 *
 * Every key takes the filter `agent_id` (the event's agent); some take more, each compared with a
 * field of the event's `data` (`name_pattern` with wildcards, the others by equality). A pattern
 * with several keys matches when any key does.
 */
const LIFECYCLE_KINDS: readonly EventKind[] = ['agent.installed', 'agent.upgraded', 'agent.activated', 'agent.suspended', 'agent.uninstalled'];

interface KeySpec {
  kinds: readonly EventKind[];
  /** filter name -> the data field it is compared with (`agent_id` is the event's own). */
  filters: Record<string, string>;
}

const FILTERS_BY_AREA: Record<string, Record<string, string>> = {
  agent: { name_pattern: 'name' },
  invocation: { source: 'source' },
  workflow: { workflow_name: 'workflow_name', workflow_id: 'workflow_id' },
  schedule: { schedule_id: 'schedule_id' },
  channel: { channel_id: 'channel_id', kind: 'kind' },
  licence: { budget: 'budget' },
  audit: {},
  package: { name: 'name' },
};

function buildKeys(): Record<string, KeySpec> {
  const keys: Record<string, KeySpec> = {
    lifecycle: { kinds: LIFECYCLE_KINDS, filters: { agent_id: 'agent_id', name_pattern: 'name' } },
    agent_spawned: { kinds: ['agent.installed'], filters: { agent_id: 'agent_id', name_pattern: 'name' } },
  };
  for (const kind of EVENT_KINDS) {
    const area = kind.split('.')[0] ?? '';
    keys[patternKeyOf(kind)] = { kinds: [kind], filters: { agent_id: 'agent_id', ...FILTERS_BY_AREA[area] } };
  }
  return keys;
}

/** The per-kind pattern key of an event kind: `invocation.failed` -> `invocation_failed`. */
export function patternKeyOf(kind: EventKind): string {
  return kind.replaceAll('.', '_');
}

/** Every pattern key, with the kinds it matches and the filters it takes (docs, errors). */
export const TRIGGER_PATTERN_KEYS: Readonly<Record<string, KeySpec>> = buildKeys();

/**
 * Checks a pattern from the API: at least one key, every key known, every filter known to its key
 * and a string. Throws ValidationError naming the bad key or filter; nothing is stored then.
 */
export function checkTriggerPattern(pattern: TriggerPattern): void {
  const entries = Object.entries(pattern);
  if (entries.length === 0) throw Errors.validation('pattern needs at least one key, e.g. {"lifecycle": {}} (docs/events.md)');
  for (const [key, filters] of entries) {
    const spec = TRIGGER_PATTERN_KEYS[key];
    if (spec === undefined) {
      throw Errors.validation(`unknown pattern key '${key}'; known keys: ${Object.keys(TRIGGER_PATTERN_KEYS).join(', ')}`, { key });
    }
    for (const [filter, value] of Object.entries(filters)) {
      if (!Object.hasOwn(spec.filters, filter)) {
        const known = Object.keys(spec.filters);
        throw Errors.validation(`unknown filter '${filter}' in pattern key '${key}'; it takes ${known.length === 0 ? 'none' : known.join(', ')}`, { key, filter });
      }
      if (typeof value !== 'string' || value === '') {
        throw Errors.validation(`filter '${filter}' in pattern key '${key}' must be a non-empty string`, { key, filter });
      }
    }
  }
}

/** Whether the event matches the pattern (any key). Unknown keys (an older or newer node) never match. */
export function matchesPattern(pattern: TriggerPattern, event: PlatformEvent): boolean {
  return matchWith(pattern, event, false);
}

/**
 * Whether a node of any version might match the event with this pattern: as `matchesPattern`, but
 * a key or filter this node does not know counts as a match (a newer worker may know it). What
 * decides whether an event is published at all (event-interest.ts) must never say no to a match.
 */
export function mayMatchPattern(pattern: TriggerPattern, event: PlatformEvent): boolean {
  return matchWith(pattern, event, true);
}

function matchWith(pattern: TriggerPattern, event: PlatformEvent, unknownMatches: boolean): boolean {
  return Object.entries(pattern).some(([key, filters]) => {
    const spec = TRIGGER_PATTERN_KEYS[key];
    if (spec === undefined) return unknownMatches;
    if (!spec.kinds.includes(event.kind)) return false;
    return Object.entries(filters).every(([filter, expected]) => {
      const field = spec.filters[filter];
      if (field === undefined) return unknownMatches;
      if (typeof expected !== 'string') return false;
      const actual = field === 'agent_id' ? event.agent_id : event.data[field];
      if (typeof actual !== 'string') return false;
      return filter === 'name_pattern' ? wildcardMatch(expected, actual) : actual === expected;
    });
  });
}

/** `*` matches any run of characters (none included); everything else literally; whole string. */
export function wildcardMatch(pattern: string, value: string): boolean {
  const source = pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*');
  return new RegExp(`^${source}$`, 's').test(value);
}
