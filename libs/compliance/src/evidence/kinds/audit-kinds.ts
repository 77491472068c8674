import type { EvidencePointer } from '@agent-platform/contracts';
import { Type } from 'typebox';
import type { EvidenceFacts } from '../evidence-facts.ts';
import {
  daysBefore,
  direct,
  evidenceKind,
  listSome,
  plural,
  seqRange,
  type EvidenceOutcome,
  type ScannedEntry,
} from '../evidence-kind.ts';

const NoParams = Type.Object({}, { additionalProperties: false });
const DAY_MS = 86_400_000;

const disabled = (what: string): EvidenceOutcome => ({
  status: 'Unknown',
  summary: `The audit trail is disabled ([audit] enabled = false): ${what} cannot be shown.`,
  pointers: [{ type: 'config', ref: 'audit.enabled', detail: 'false' }],
});

function chainPointers(facts: EvidenceFacts): EvidencePointer[] {
  const { entry_count, tip_hash } = facts.integrity;
  if (entry_count === 0) return [];
  return [{ type: 'audit_seq', ref: seqRange(1, entry_count), detail: `tip ${tip_hash ?? 'none'}` }];
}

export const auditEnabled = evidenceKind({
  kind: 'audit_enabled',
  describes: 'The hash-chained audit trail is on ([audit] enabled).',
  params: NoParams,
  plan: () =>
    direct((facts) =>
      facts.auditEnabled
        ? {
            status: 'Satisfied',
            summary: 'The audit trail is enabled.',
            pointers: [{ type: 'config', ref: 'audit.enabled', detail: 'true' }],
          }
        : {
            status: 'Unsatisfied',
            summary: 'The audit trail is disabled: nothing the platform does is recorded.',
            pointers: [{ type: 'config', ref: 'audit.enabled', detail: 'false' }],
          },
    ),
});

export const auditChain = evidenceKind({
  kind: 'audit_chain',
  describes:
    'Every entry of the audit chain re-hashes and links (a full walk), and the latest external checkpoint, if any, matches.',
  params: NoParams,
  plan: () =>
    direct((facts) => {
      const anchor = facts.integrity;
      if (anchor.valid === null) return disabled('the integrity of the record');
      if (anchor.valid) {
        return {
          status: 'Satisfied',
          summary: `The audit chain verifies: ${anchor.entry_count} entries, every one re-hashed.`,
          pointers: chainPointers(facts),
        };
      }
      const at = anchor.first_invalid_seq === null ? '' : ` at seq ${anchor.first_invalid_seq}`;
      return {
        status: 'Unsatisfied',
        summary: `The audit chain does not verify${at}: ${anchor.reason ?? 'broken'}.`,
        pointers:
          anchor.first_invalid_seq === null
            ? chainPointers(facts)
            : [{ type: 'audit_seq', ref: String(anchor.first_invalid_seq), detail: 'first invalid entry' }],
      };
    }),
});

export const auditCheckpoints = evidenceKind({
  kind: 'audit_checkpoints',
  describes:
    'A signed checkpoint kept outside the store verifies against the chain (docs/audit.md "Checkpoints"), optionally no older than max_age_hours.',
  params: Type.Object(
    { max_age_hours: Type.Optional(Type.Integer({ minimum: 1 })) },
    { additionalProperties: false },
  ),
  plan: (params) =>
    direct((facts) => {
      const { checkpoint_status: status, checkpoint } = facts.integrity;
      const sink: EvidencePointer = {
        type: 'config',
        ref: 'audit.checkpoints.sink',
        detail: checkpoint?.sink ?? (status === 'not_configured' ? 'not set' : 'set'),
      };
      if (status === 'disabled') return disabled('a checkpoint');
      if (status === 'not_configured') {
        return {
          status: 'Unsatisfied',
          summary:
            'No checkpoint sink is configured: entries cut off the end of the trail would go unnoticed.',
          pointers: [sink],
        };
      }
      if (status === 'none_written')
        return {
          status: 'Unsatisfied',
          summary: 'A checkpoint sink is configured but no checkpoint was written yet.',
          pointers: [sink],
        };
      if (checkpoint === null)
        return {
          status: 'Unsatisfied',
          summary: 'The latest checkpoint could not be read.',
          pointers: [sink],
        };
      const pointer: EvidencePointer = {
        type: 'checkpoint',
        ref: checkpoint.at,
        detail: `${checkpoint.entry_count} entries, key ${checkpoint.key_id}`,
      };
      if (status === 'failed') {
        return {
          status: 'Unsatisfied',
          summary: `The latest checkpoint does not match the chain: ${facts.integrity.reason ?? 'failed'}.`,
          pointers: [sink, pointer],
        };
      }
      const ageHours = Math.floor((facts.now.getTime() - Date.parse(checkpoint.at)) / 3_600_000);
      if (params.max_age_hours !== undefined && ageHours > params.max_age_hours) {
        return {
          status: 'Unsatisfied',
          summary: `The latest checkpoint verifies but is ${ageHours} hours old (at most ${params.max_age_hours} allowed).`,
          pointers: [sink, pointer],
        };
      }
      return {
        status: 'Satisfied',
        summary: `The latest checkpoint (${checkpoint.at}, ${checkpoint.entry_count} entries) is signed and matches the chain.`,
        pointers: [sink, pointer],
      };
    }),
});

export const auditRetention = evidenceKind({
  kind: 'audit_retention',
  describes:
    'No entry younger than min_days was removed: the trail still starts at seq 1 (in the live store, or in a verified audit archive that reaches it), or its oldest entry is at least min_days old.',
  params: Type.Object(
    { min_days: Type.Integer({ minimum: 1, maximum: 36_600 }) },
    { additionalProperties: false },
  ),
  plan: (params) =>
    direct((facts) => {
      if (!facts.auditEnabled) return disabled('retention');
      const oldest = facts.oldestEntry;
      if (oldest === null)
        return { status: 'Unknown', summary: 'The audit trail holds no entry yet.', pointers: [] };
      const ageDays = Math.floor((facts.now.getTime() - Date.parse(oldest.timestamp)) / DAY_MS);
      const pointer: EvidencePointer = {
        type: 'audit_seq',
        ref: String(oldest.seq),
        detail: `oldest entry kept, ${oldest.timestamp}`,
      };
      if (oldest.seq === 1) {
        return {
          status: 'Satisfied',
          summary: `Nothing was ever removed: the trail starts at seq 1 (${oldest.timestamp}, ${ageDays} days ago); required: ${params.min_days} days.`,
          pointers: [pointer],
        };
      }
      // Retention moves old entries to the audit archive, never drops them (docs/retention.md): with
      // a verified archive from seq 1 up to the live trail, nothing was removed, exactly as
      // GET /security/verify shows it (`archive`, `live`).
      const archive = facts.archive;
      if (
        archive !== null &&
        archive.status === 'verified' &&
        archive.from_seq === 1 &&
        archive.to_seq !== null &&
        archive.to_seq + 1 >= oldest.seq
      ) {
        return {
          status: 'Satisfied',
          summary: `Nothing was removed: seqs ${seqRange(1, archive.to_seq)} are kept in the verified audit archive (${archive.sink}) and the live trail starts at seq ${oldest.seq} (${oldest.timestamp}, ${ageDays} days ago); required: ${params.min_days} days.`,
          pointers: [
            { type: 'audit_seq', ref: seqRange(1, archive.to_seq), detail: `archived, ${archive.sink}` },
            pointer,
          ],
        };
      }
      if (ageDays >= params.min_days) {
        return {
          status: 'Satisfied',
          summary: `Entries are kept for ${ageDays} days (oldest kept: seq ${oldest.seq}); required: ${params.min_days} days.`,
          pointers: [pointer],
        };
      }
      return {
        status: 'Unsatisfied',
        summary: `Entries before seq ${oldest.seq} were removed although the oldest entry kept is only ${ageDays} days old; required: ${params.min_days} days.`,
        pointers: [pointer],
      };
    }),
});

/** `POST /agents/:id/*` style patterns: `*` matches any run of characters. */
export function actionMatcher(patterns: readonly string[]): (value: string) => boolean {
  const regexes = patterns.map(
    (p) =>
      new RegExp(
        `^${p
          .split('*')
          .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
          .join('.*')}$`,
      ),
  );
  return (value) => regexes.some((r) => r.test(value));
}

const ActivityParams = Type.Object(
  {
    actions: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
      minItems: 1,
      maxItems: 50,
      description: 'Audit `action` values; `*` matches any characters (`POST /agents/:id/*`, `gateway.*`).',
    }),
    category: Type.Optional(Type.String({ minLength: 1 })),
    roles: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        minItems: 1,
        description: 'Only entries of callers in these roles.',
      }),
    ),
    results: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        minItems: 1,
        description: 'Only entries whose `result` matches (`2*` for successes).',
      }),
    ),
    within_days: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 36_600, description: 'Only entries of the last N days.' }),
    ),
  },
  { additionalProperties: false },
);

export const auditActivity = evidenceKind({
  kind: 'audit_activity',
  describes:
    'The trail records matching events (actions, optionally category, roles, results, the last within_days): evidence that the control operated.',
  params: ActivityParams,
  plan: (params, now) => {
    const action = actionMatcher(params.actions);
    const result = params.results === undefined ? () => true : actionMatcher(params.results);
    const roles = params.roles === undefined ? null : new Set(params.roles);
    const since = params.within_days === undefined ? null : daysBefore(now, params.within_days);
    const seen: ScannedEntry[] = [];
    const actions = new Set<string>();
    let count = 0;
    let last: ScannedEntry | null = null;
    const window = since === null ? '' : ` in the last ${params.within_days} days`;
    return {
      taps: [
        {
          since,
          see: (entry) => {
            if (params.category !== undefined && entry.category !== params.category) return;
            if (roles !== null && !roles.has(entry.role)) return;
            if (!action(entry.action) || !result(entry.result)) return;
            count += 1;
            actions.add(entry.action);
            if (seen.length < 5) seen.push(entry);
            last = entry;
          },
        },
      ],
      evaluate: async (facts) => {
        if (!facts.auditEnabled) return disabled('activity');
        if (count === 0 || last === null) {
          const roles = params.roles === undefined ? '' : ` by the ${params.roles.join(' or ')} role`;
          return {
            status: 'Unknown',
            summary: `No matching entry (${listSome(params.actions, 3)})${roles} was recorded${window}: nothing shows the control operating.`,
            pointers: [],
          };
        }
        const final: ScannedEntry = last;
        const first = seen[0]!;
        const identities = [...new Set(seen.map((e) => `${e.identity} (${e.role})`))];
        return {
          status: 'Satisfied',
          summary: `${plural(count, 'entry')} recorded${window} (${listSome([...actions].sort(), 3)}), each with the caller's identity and role, e.g. ${listSome(identities, 3)}.`,
          pointers: [
            {
              type: 'audit_seq',
              ref: seqRange(first.seq, final.seq),
              detail: `${count} entries, e.g. seq ${listSome(
                seen.map((e) => String(e.seq)),
                5,
              )}`,
            },
          ],
        };
      },
    };
  },
});
