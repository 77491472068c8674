import { createHash } from 'node:crypto';
import type { PlatformEvent, WebhookDelivery } from '@agent-platform/contracts';
import { signWebhook } from '@agent-platform/net';
import type { Clock } from '../time/clock.ts';
import type { DeliveryLog } from './delivery-log.ts';

/**
 * The port deliveries go out through: one POST, no redirect followed, answering the status or
 * throwing (network error, timeout, a private target refused under DECISIONS D9). The adapter is
 * libs/net `sendGuarded`, bounded by `[webhooks] timeout_ms` and `max_response_bytes`.
 */
export type WebhookTransport = (request: { url: string; headers: Record<string, string>; body: string }) => Promise<{ status: number }>;

export const WEBHOOK_USER_AGENT = 'agent-platform-webhooks/1';

/** One message to one webhook: what is signed and sent, the same bytes on every attempt. */
export interface WebhookMessage {
  /** The `webhook-id` header (stable across retries of one event). */
  id: string;
  kind: string;
  event_id: string | null;
  body: string;
}

/**
 * `webhook-id` of the delivery of `eventId` to `webhookId`: derived from both, so every attempt,
 * from whatever worker, carries the same id and a receiver de-duplicates on it.
 */
export function deliveryMessageId(webhookId: string, eventId: string): string {
  return 'msg_' + createHash('sha256').update(`${webhookId}:${eventId}`).digest('base64url').slice(0, 32);
}

/** The body of an event's delivery (docs/webhooks.md "The body"): Standard Webhooks' `{type, timestamp, data}`. */
export function eventMessage(webhookId: string, event: PlatformEvent): WebhookMessage {
  return {
    id: deliveryMessageId(webhookId, event.id),
    kind: event.kind,
    event_id: event.id,
    body: JSON.stringify({ type: event.kind, timestamp: event.occurred_at, data: event }),
  };
}

export interface AttemptDeps {
  transport: WebhookTransport;
  log: DeliveryLog;
  clock: Clock;
}

/**
 * Sends `message` to `target` once, signed with `secret` at this attempt's time, and records the
 * attempt in the delivery log. Never throws for the receiver's sake: a non-2xx answer (3xx
 * included: redirects are not followed), a timeout or a refused target is `delivered: false`.
 */
export async function attemptDelivery(
  deps: AttemptDeps,
  target: { webhook_id: string; url: string; secret: string },
  message: WebhookMessage,
  attempt: { number: number; last: boolean },
): Promise<WebhookDelivery> {
  const started = deps.clock.now();
  const headers = {
    'content-type': 'application/json',
    'user-agent': WEBHOOK_USER_AGENT,
    ...signWebhook(target.secret, message.id, Math.floor(started.getTime() / 1000), message.body),
  };
  const t0 = performance.now();
  let status: number | null = null;
  let error: string | null = null;
  try {
    status = (await deps.transport({ url: target.url, headers, body: message.body })).status;
    if (status < 200 || status > 299) error = answerError(status);
  } catch (cause) {
    error = cause instanceof Error ? cause.message : String(cause);
  }
  const delivered = error === null;
  return deps.log.record({
    webhook_id: target.webhook_id,
    message_id: message.id,
    event_id: message.event_id,
    kind: message.kind,
    attempt: attempt.number,
    delivered,
    status_code: status,
    error,
    latency_ms: Math.round(performance.now() - t0),
    dead_letter: !delivered && attempt.last,
    at: started.toISOString(),
  });
}

function answerError(status: number): string {
  if (status >= 300 && status < 400) return `the receiver answered ${status}: a redirect, which webhook deliveries do not follow`;
  return `the receiver answered ${status}, not 2xx`;
}
