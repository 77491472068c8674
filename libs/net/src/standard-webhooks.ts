import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Standard Webhooks (https://www.standardwebhooks.com): the signing every signed HTTP message of
 * the platform uses, outbound webhook deliveries (docs/webhooks.md) and the `webhook` channel kind
 * in both directions (docs/channels.md).
 *
 * - Headers: `webhook-id` (the message id, the same on every retry), `webhook-timestamp` (Unix
 *   seconds of this attempt) and `webhook-signature` (space-separated `v1,<base64>` entries).
 * - The signed content is `${id}.${timestamp}.${body}`, HMAC-SHA256 keyed by the secret's bytes.
 * - Secrets are `whsec_` + base64 of 32 random bytes; the key is the base64-decoded part.
 */
export const SECRET_PREFIX = 'whsec_';

/** Default tolerance of `verifyWebhook` for the timestamp, either way, in seconds. */
export const DEFAULT_TOLERANCE_SECS = 5 * 60;

export type SignedHeaders = {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
};

/** A fresh secret, shown once to whoever creates the webhook or channel. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

function keyOf(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const key = Buffer.from(encoded, 'base64');
  if (key.length === 0) throw new Error('webhook secret is empty');
  return key;
}

/** The `v1,<base64>` signature of one message. */
export function signatureOf(secret: string, id: string, timestampSecs: number, body: string | Uint8Array): string {
  const mac = createHmac('sha256', keyOf(secret));
  mac.update(`${id}.${timestampSecs}.`);
  mac.update(body);
  return `v1,${mac.digest('base64')}`;
}

/** The three headers that sign `body` as message `id` sent at `timestampSecs`. */
export function signWebhook(secret: string, id: string, timestampSecs: number, body: string | Uint8Array): SignedHeaders {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSecs),
    'webhook-signature': signatureOf(secret, id, timestampSecs, body),
  };
}

export type VerifyResult = { ok: true; id: string; timestamp: number } | { ok: false; reason: string };

/**
 * Checks a signed message: headers present, timestamp within `toleranceSecs` of `nowSecs` (a
 * replay of an old message fails here), one of the `v1` signatures matching (compared in
 * constant time). Headers are looked up case-insensitively.
 */
export function verifyWebhook(
  secret: string,
  headers: Record<string, string | string[] | undefined>,
  body: string | Uint8Array,
  nowSecs: number,
  toleranceSecs = DEFAULT_TOLERANCE_SECS,
): VerifyResult {
  const header = (name: string): string | undefined => {
    for (const [key, value] of Object.entries(headers)) {
      if (key.toLowerCase() !== name) continue;
      return Array.isArray(value) ? value[0] : value;
    }
    return undefined;
  };
  const id = header('webhook-id');
  const stamp = header('webhook-timestamp');
  const signatures = header('webhook-signature');
  if (id === undefined || stamp === undefined || signatures === undefined)
    return { ok: false, reason: 'missing webhook-id, webhook-timestamp or webhook-signature header' };
  const timestamp = Number(stamp);
  if (!/^\d{1,12}$/.test(stamp) || !Number.isSafeInteger(timestamp)) return { ok: false, reason: 'webhook-timestamp is not Unix seconds' };
  if (Math.abs(nowSecs - timestamp) > toleranceSecs)
    return { ok: false, reason: `webhook-timestamp is more than ${toleranceSecs} s away from now (replayed or clock skew)` };
  const expected = Buffer.from(signatureOf(secret, id, timestamp, body).slice(3), 'base64');
  for (const entry of signatures.split(' ')) {
    const [version, value] = entry.split(',', 2);
    if (version !== 'v1' || value === undefined) continue;
    const given = Buffer.from(value, 'base64');
    if (given.length === expected.length && timingSafeEqual(given, expected)) return { ok: true, id, timestamp };
  }
  return { ok: false, reason: 'no webhook-signature matches' };
}
