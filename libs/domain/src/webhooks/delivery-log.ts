import { randomUUID } from 'node:crypto';
import type { WebhookDelivery } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import type { Clock } from '../time/clock.ts';

/** Collection `webhook_deliveries`: one entry per attempt; entries expire after `[webhooks] log_retention_days`. */
export const WEBHOOK_DELIVERIES_COLLECTION = 'webhook_deliveries';

interface DeliveryRecord extends WebhookDelivery {
  expires_at: string;
}

export type NewDelivery = Omit<WebhookDelivery, 'id'>;

/** The delivery log of every webhook (GET /webhooks/{id}/deliveries). */
export interface DeliveryLog {
  record(attempt: NewDelivery): Promise<WebhookDelivery>;
  /** Newest first. */
  list(webhookId: string, query: { limit: number; deadLetter?: boolean }): Promise<WebhookDelivery[]>;
}

export function createDeliveryLog(store: Store, clock: Clock, retentionDays: () => number): DeliveryLog {
  const entries = store.collection<DeliveryRecord>(WEBHOOK_DELIVERIES_COLLECTION, {
    indexes: [{ field: 'webhook_id' }, { field: 'at' }],
    ttlField: 'expires_at',
  });
  return {
    async record(attempt) {
      const expires = new Date(clock.now().getTime() + retentionDays() * 86_400_000).toISOString();
      const entry: DeliveryRecord = { id: randomUUID(), ...attempt, expires_at: expires };
      await entries.insert(entry);
      const { expires_at: _hidden, ...view } = entry;
      return view;
    },
    async list(webhookId, query) {
      const found = await entries.find({
        where: { webhook_id: webhookId, ...(query.deadLetter === undefined ? {} : { dead_letter: query.deadLetter }) },
        orderBy: { field: 'at', direction: 'desc' },
        limit: query.limit,
      });
      return found.map(({ doc: { expires_at: _hidden, ...view } }) => view);
    },
  };
}
