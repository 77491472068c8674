import { randomUUID } from 'node:crypto';
import type { LegalHoldView, PlatformConfig } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import type { AuditTrail } from '../audit/audit-entry.ts';
import { Errors } from '../errors/errors.ts';
import type { Clock } from '../time/clock.ts';

/** Collection `retention_holds`: the legal holds placed through the api (docs/retention.md "Legal holds"). */
export const RETENTION_HOLDS_COLLECTION = 'retention_holds';

interface HoldRecord {
  id: string;
  agent_id: string | null;
  business_key: string | null;
  reason: string;
  created_by: string;
  created_at: string;
}

export interface HoldInput {
  agent_id?: string | undefined;
  business_key?: string | undefined;
  reason: string;
}

export interface HoldCaller {
  identity: string;
  role: string;
}

/**
 * Legal holds: those of `[retention] hold_agents` / `hold_business_keys` (read at each call, so a
 * config reload applies) and those placed through the api, kept in the store so that a legal team
 * adds or lifts one without a restart and every api node and sweep sees it at once. Placing and
 * lifting are audited (category `retention`) with the hold's subject and reason.
 */
export interface LegalHolds {
  /** Config holds first (by subject), then the api's (oldest first). */
  list(): Promise<LegalHoldView[]>;
  add(input: HoldInput, caller: HoldCaller): Promise<LegalHoldView>;
  /** 404 for an unknown id; 409 for a config hold (lifted by editing the config). */
  remove(id: string, caller: HoldCaller): Promise<LegalHoldView>;
}

export interface LegalHoldsDeps {
  store: Store;
  clock: Clock;
  audit: Pick<AuditTrail, 'record'>;
  settings: () => Pick<PlatformConfig['retention'], 'hold_agents' | 'hold_business_keys'>;
  /**
   * Called once a hold is stored, before `add` resolves: returns when no sweep, in any process,
   * can delete anything the hold covers any more (sweep-lock.ts `fenceHolds`).
   */
  fence: () => Promise<void>;
}

export function createLegalHolds(deps: LegalHoldsDeps): LegalHolds {
  const holds = deps.store.collection<HoldRecord>(RETENTION_HOLDS_COLLECTION, {
    indexes: [{ field: 'created_at' }],
  });

  function configHolds(): LegalHoldView[] {
    const { hold_agents: agents, hold_business_keys: keys } = deps.settings();
    const base = {
      reason: 'configured in [retention]',
      source: 'config' as const,
      created_by: null,
      created_at: null,
    };
    return [
      ...[...new Set(agents)].map((id) => ({
        ...base,
        id: `config:agent:${id}`,
        agent_id: id,
        business_key: null,
      })),
      ...[...new Set(keys)].map((key) => ({
        ...base,
        id: `config:business_key:${key}`,
        agent_id: null,
        business_key: key,
      })),
    ];
  }

  const view = (r: HoldRecord): LegalHoldView => ({ ...r, source: 'api' });

  async function audit(action: string, hold: LegalHoldView, caller: HoldCaller): Promise<void> {
    await deps.audit.record({
      category: 'retention',
      identity: caller.identity,
      role: caller.role,
      action,
      target: hold.id,
      result: 'success',
      metadata: {
        hold_id: hold.id,
        ...(hold.agent_id === null ? {} : { agent_id: hold.agent_id }),
        ...(hold.business_key === null ? {} : { business_key: hold.business_key }),
        reason: hold.reason,
      },
    });
  }

  return {
    async list() {
      const stored = await holds.find({ orderBy: { field: 'created_at', direction: 'asc' } });
      return [...configHolds(), ...stored.map(({ doc }) => view(doc))];
    },

    async add(input, caller) {
      const hasAgent = input.agent_id !== undefined;
      const hasKey = input.business_key !== undefined;
      if (hasAgent === hasKey) {
        throw Errors.validation('a legal hold names exactly one of agent_id and business_key', {
          fields: ['agent_id', 'business_key'],
        });
      }
      const record: HoldRecord = {
        id: randomUUID(),
        agent_id: input.agent_id ?? null,
        business_key: input.business_key ?? null,
        reason: input.reason,
        created_by: caller.identity,
        created_at: deps.clock.now().toISOString(),
      };
      await holds.insert(record);
      await deps.fence();
      const placed = view(record);
      await audit('retention.hold.placed', placed, caller);
      return placed;
    },

    async remove(id, caller) {
      if (id.startsWith('config:')) {
        throw Errors.conflict(
          `legal hold '${id}' is configured in [retention]; lift it by editing the config and reloading`,
          { hold_id: id },
        );
      }
      const found = await holds.get(id);
      if (found === null) throw Errors.notFound('legal hold', id);
      // The version check makes a concurrent lift of the same hold audited once.
      if (!(await holds.delete(id, found.version).catch(() => false)))
        throw Errors.notFound('legal hold', id);
      const lifted = view(found.doc);
      await audit('retention.hold.lifted', lifted, caller);
      return lifted;
    },
  };
}
