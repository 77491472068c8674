import { openValue, sealValue } from '../vault/vault-crypto.ts';
import { webhookSecretName, type WebhookRecord } from './webhook-record.ts';

/**
 * Webhook signing secrets, sealed with the vault key (AES-256-GCM, vault-crypto.ts) under the
 * webhook's own name, so a sealed secret copied onto another webhook does not open. Every process
 * that delivers (agent workers, the all-in-one) and the api (tests) need the same vault key.
 */
export interface WebhookSecrets {
  seal(webhookId: string, secret: string): string;
  open(record: WebhookRecord): string;
}

export function createWebhookSecrets(key: Buffer): WebhookSecrets {
  return {
    seal: (webhookId, secret) => sealValue(key, webhookSecretName(webhookId), secret),
    open: (record) => openValue(key, webhookSecretName(record.id), record.secret_sealed),
  };
}
