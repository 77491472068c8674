import { describe, expect, it } from 'vitest';
import { newWebhookSecret, signWebhook, verifyWebhook } from './standard-webhooks.ts';

describe('Standard Webhooks signing', () => {
  const secret = newWebhookSecret();
  const body = JSON.stringify({ type: 'agent.installed', data: { agent_id: 'a' } });

  it('matches the published test vector of the Standard Webhooks spec', () => {
    // From the spec's reference libraries: secret, id, timestamp and payload give this signature.
    const headers = signWebhook('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}');
    expect(headers['webhook-signature']).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('verifies what it signs, within the tolerance only', () => {
    const headers = signWebhook(secret, 'msg_1', 1_000_000, body);
    expect(verifyWebhook(secret, headers, body, 1_000_010)).toMatchObject({ ok: true, id: 'msg_1' });
    expect(verifyWebhook(secret, headers, body, 1_000_000 + 301)).toMatchObject({ ok: false });
  });

  it('refuses a changed body, another secret or a missing header', () => {
    const headers = signWebhook(secret, 'msg_1', 1_000_000, body);
    expect(verifyWebhook(secret, headers, body + ' ', 1_000_000).ok).toBe(false);
    expect(verifyWebhook(newWebhookSecret(), headers, body, 1_000_000).ok).toBe(false);
    const { 'webhook-signature': _dropped, ...unsigned } = headers;
    expect(verifyWebhook(secret, unsigned, body, 1_000_000).ok).toBe(false);
  });
});
