import type { BackupScope } from '@agent-platform/contracts';
import type { StorePart } from '@agent-platform/store';

/**
 * `agents_only`: the agents and what they need to work (docs/backup.md "Scopes"): what is
 * installed (packages and their records), each agent's settings, schedules, triggers and
 * webhooks, and its data (memory, sessions with their long turns' contents, transcripts, stats counters). Not the vault, API
 * keys, the audit trail, licence usage, workflow runs, channels or runtime state: restoring an
 * agents_only archive leaves all of those as they are.
 *
 * A new collection is in `full` only until it is listed here: `backup-scopes.test.ts` fails for a
 * collection of a booted platform that is in neither list, so that the choice is made.
 */
export const AGENT_COLLECTIONS = [
  'agents',
  'installed_packages',
  'skills',
  'competencies',
  'integrations',
  'contracts',
  'workflows',
  'competency_settings',
  'contract_bindings',
  'cron_jobs',
  'triggers',
  'webhooks',
  'memory',
  'sessions',
  'session_contents',
  'session_transcripts',
] as const;

/** The counters that belong to agents: their stats (`agent:<id>:...`). */
export const AGENT_COUNTER_PREFIXES = ['agent:'] as const;

/**
 * Counters a restore never lowers: the licence's transactions and spend. Rolling them back would
 * hand the licence's budget out a second time.
 */
export const KEEP_HIGHER_COUNTER_PREFIXES = ['licence:'] as const;

export function storePartOf(scope: BackupScope): StorePart {
  return scope === 'full'
    ? { collections: 'all', logs: 'all', counterPrefixes: 'all' }
    : { collections: AGENT_COLLECTIONS, logs: [], counterPrefixes: AGENT_COUNTER_PREFIXES };
}
