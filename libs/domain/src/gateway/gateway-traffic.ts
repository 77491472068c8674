import type { ProviderHealth, TrafficDecision } from '@agent-platform/contracts';
import { StoreConflictError, type Store, type Versioned } from '@agent-platform/store';

/** A decision as stored: the wire view plus its expiry. */
type StoredDecision = TrafficDecision & { expires_at: string };

/** A decision as `begin` wrote it: what `settle` rewrites without reading it again. */
export type BegunDecision = Versioned<StoredDecision>;

/**
 * The recent routing decisions of the privacy gateway (GET /gateway/traffic), in the shared store
 * so that every api node of a fleet shows what every worker decided. Collection
 * `gateway_traffic`, one document per routed model request, written by the process making the
 * model call when its first call starts (`pending`) and again when it ends; each expires
 * `[gateway] traffic_retention_hours` after it was written. Counts and categories only.
 */
export interface GatewayTraffic {
  begin(decision: TrafficDecision, retentionHours: number): Promise<BegunDecision>;
  /**
   * Rewrites the decision's outcome fields; a decision that expired (or was never written) stays
   * absent. Given what `begin` wrote, one write with that version (no read): only when the row
   * changed meanwhile is it read again.
   */
  settle(id: string, change: Partial<TrafficDecision>, begun?: BegunDecision): Promise<void>;
  recent(limit: number): Promise<TrafficDecision[]>;
  /** From the latest finished requests routed to the provider in the recent traffic; no probe. */
  health(providerId: string): Promise<ProviderHealth>;
}

/** How many of a provider's latest decisions the health view reads to find finished ones. */
const HEALTH_WINDOW = 20;

export function createGatewayTraffic(store: Store, now: () => Date): GatewayTraffic {
  const decisions = store.collection<StoredDecision>('gateway_traffic', {
    indexes: [{ field: 'at' }, { field: 'provider' }],
    ttlField: 'expires_at',
  });
  const view = ({ expires_at: _expires, ...decision }: StoredDecision): TrafficDecision => decision;

  return {
    async begin(decision, retentionHours) {
      const expires = new Date(now().getTime() + retentionHours * 3_600_000).toISOString();
      return decisions.insert({ ...decision, expires_at: expires });
    },
    async settle(id, change, begun) {
      if (begun !== undefined && begun.doc.id === id) {
        try {
          await decisions.replace({ ...begun.doc, ...change, id }, begun.version);
          return;
        } catch (err) {
          // Changed or gone since it was written (expired, removed): as `update` decides below.
          if (!(err instanceof StoreConflictError)) throw err;
        }
      }
      await decisions.update(id, (current) => (current === null ? null : { ...current.doc, ...change, id }));
    },
    async recent(limit) {
      const rows = await decisions.find({ orderBy: { field: 'at', direction: 'desc' }, limit });
      return rows.map((row) => view(row.doc));
    },
    async health(providerId) {
      const rows = await decisions.find({
        where: { provider: providerId },
        orderBy: { field: 'at', direction: 'desc' },
        limit: HEALTH_WINDOW,
      });
      const finished = rows.map((r) => r.doc).filter((d) => d.outcome === 'ok' || d.outcome === 'failed');
      const lastOk = finished.find((d) => d.outcome === 'ok');
      const lastFailure = finished.find((d) => d.outcome === 'failed');
      const latest = finished[0];
      return {
        status: latest === undefined ? 'unknown' : latest.outcome === 'ok' ? 'ok' : 'failing',
        last_ok_at: lastOk?.finished_at ?? null,
        last_failure_at: lastFailure?.finished_at ?? null,
      };
    },
  };
}
