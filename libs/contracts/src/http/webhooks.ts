import { Type, type Static } from 'typebox';

/**
 * HTTP bodies of spec §Webhooks (outbound) and §Resources "Webhook", plus what is ours
 * (docs/webhooks.md): the per-webhook signing secret returned once by POST /webhooks, and the
 * delivery log of GET /webhooks/{id}/deliveries.
 */

/** Spec §Resources "Webhook". The signing secret is never part of it. */
export const Webhook = Type.Object({
  id: Type.String({ description: 'Webhook id (a UUID).' }),
  agent_id: Type.String({ description: 'The agent whose events are delivered (UUID).' }),
  url: Type.String({ description: 'Where deliveries are POSTed (absolute http or https URL).' }),
  created_at: Type.String({ description: 'Creation time, ISO 8601 UTC.' }),
});
export type Webhook = Static<typeof Webhook>;

export const WebhookList = Type.Object({
  webhooks: Type.Array(Webhook, { description: 'Every webhook, oldest first.' }),
});
export type WebhookList = Static<typeof WebhookList>;

export const WebhookCreateBody = Type.Object(
  {
    agent_id: Type.String({ description: 'The agent whose events are delivered (UUID of an installed agent).' }),
    url: Type.String({
      maxLength: 2048,
      description:
        'Absolute http(s) URL. Private targets are refused unless [network] allow_private_targets (DECISIONS D9).',
    }),
  },
  { additionalProperties: false },
);
export type WebhookCreateBody = Static<typeof WebhookCreateBody>;

export const WebhookCreated = Type.Object({
  id: Type.String({ description: 'The new webhook id.' }),
  secret: Type.String({
    description:
      'Beyond the spec: the Standard Webhooks signing secret (`whsec_...`). Shown only in this response; store it now.',
  }),
});
export type WebhookCreated = Static<typeof WebhookCreated>;

export const WebhookIdParams = Type.Object({ id: Type.String({ description: 'Webhook id (UUID).' }) });
export type WebhookIdParams = Static<typeof WebhookIdParams>;

/** Spec §Webhooks: POST /webhooks/{id}/test answers 200 either way. */
export const WebhookTestResult = Type.Union([
  Type.Object({
    delivered: Type.Literal(true),
    status_code: Type.Integer({ description: 'The 2xx status the receiver answered.' }),
    latency_ms: Type.Integer({ description: 'From sending to the answer, in milliseconds.' }),
  }),
  Type.Object({
    delivered: Type.Literal(false),
    error: Type.String({
      description: 'Why: a non-2xx answer (its status in the text), a timeout, a network error or a refused private target.',
    }),
  }),
]);
export type WebhookTestResult = Static<typeof WebhookTestResult>;

/** One attempt to deliver one event (or a test) to one webhook. */
export const WebhookDelivery = Type.Object({
  id: Type.String({ description: 'Id of this log entry.' }),
  webhook_id: Type.String(),
  message_id: Type.String({ description: 'The `webhook-id` header sent: the same on every attempt of one event.' }),
  event_id: Type.Union([Type.String(), Type.Null()], { description: 'The platform event delivered; null for a test.' }),
  kind: Type.String({ description: 'The event kind, or `webhook.test`.' }),
  attempt: Type.Integer({ minimum: 1, description: '1 for the first attempt.' }),
  delivered: Type.Boolean({ description: 'True when the receiver answered 2xx.' }),
  status_code: Type.Union([Type.Integer(), Type.Null()], { description: 'The receiver\'s status; null when none came.' }),
  error: Type.Union([Type.String(), Type.Null()], { description: 'Why the attempt failed; null when delivered.' }),
  latency_ms: Type.Integer(),
  dead_letter: Type.Boolean({
    description: 'True on the last failed attempt of an event: no more retries (the dead-letter record).',
  }),
  at: Type.String({ description: 'When the attempt started, ISO 8601 UTC.' }),
});
export type WebhookDelivery = Static<typeof WebhookDelivery>;

export const WebhookDeliveryList = Type.Object({
  deliveries: Type.Array(WebhookDelivery, { description: 'Newest first.' }),
});
export type WebhookDeliveryList = Static<typeof WebhookDeliveryList>;

export const WebhookDeliveriesQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50, description: 'At most this many entries.' })),
    dead_letter: Type.Optional(Type.Boolean({ description: 'true: only dead-letter records.' })),
  },
  { additionalProperties: false },
);
export type WebhookDeliveriesQuery = Static<typeof WebhookDeliveriesQuery>;
