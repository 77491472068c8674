import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { deliveryMessageId } from './webhook-attempt.ts';
import { createWebhookSecrets } from './webhook-secrets.ts';

describe('webhook secrets and message ids', () => {
  const secrets = createWebhookSecrets(randomBytes(32));
  const record = (id: string, secret_sealed: string) => ({ id, agent_id: 'a', url: 'https://e.com', created_at: '', secret_sealed });

  it('seals a secret that opens only for its own webhook and never shows it in clear', () => {
    const sealed = secrets.seal('w1', 'whsec_abc');
    expect(sealed).not.toContain('abc');
    expect(secrets.open(record('w1', sealed))).toBe('whsec_abc');
    expect(() => secrets.open(record('w2', sealed))).toThrow(/cannot be decrypted/);
    expect(() => createWebhookSecrets(randomBytes(32)).open(record('w1', sealed))).toThrow(/cannot be decrypted/);
  });

  it('gives every attempt of one event to one webhook the same webhook-id, and others another', () => {
    expect(deliveryMessageId('w1', 'e1')).toBe(deliveryMessageId('w1', 'e1'));
    expect(deliveryMessageId('w1', 'e1')).toMatch(/^msg_[A-Za-z0-9_-]{32}$/);
    expect(new Set([deliveryMessageId('w1', 'e1'), deliveryMessageId('w2', 'e1'), deliveryMessageId('w1', 'e2')]).size).toBe(3);
  });
});
