import type { Webhook } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';

/** Collection `webhooks`: one record per outbound webhook (docs/webhooks.md). */
export const WEBHOOKS_COLLECTION = 'webhooks';

/** The stored webhook: the spec's fields plus its signing secret, sealed with the vault key. */
export interface WebhookRecord extends Webhook {
  /** `sealValue(vaultKey, webhookSecretName(id), secret)`: never returned, never logged. */
  secret_sealed: string;
}

export function webhookCollection(store: Store) {
  return store.collection<WebhookRecord>(WEBHOOKS_COLLECTION, { indexes: [{ field: 'agent_id' }], readMostly: true });
}

/** The name the secret is sealed under (the AAD): a sealed secret copied to another webhook does not open. */
export function webhookSecretName(webhookId: string): string {
  return `webhook:${webhookId}`;
}

/** The view on the wire: the record without its secret. */
export function webhookView(record: WebhookRecord): Webhook {
  return { id: record.id, agent_id: record.agent_id, url: record.url, created_at: record.created_at };
}
