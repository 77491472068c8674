import { Type, type Static } from 'typebox';

/**
 * `integrations.changed` notification: the desired state of one integration changed. Hosts
 * re-read the store rather than trust the message, so a lost or repeated one is harmless: the
 * periodic reconcile catches up (docs/integrations.md "Fleet").
 */
export const IntegrationChangedMessage = Type.Object({ integration_id: Type.String({ minLength: 1 }) });
export type IntegrationChangedMessage = Static<typeof IntegrationChangedMessage>;

/** `integrations.reported` notification: `node_id` wrote its status row for `integration_id`. */
export const IntegrationReportedMessage = Type.Object({
  integration_id: Type.String({ minLength: 1 }),
  node_id: Type.String({ minLength: 1 }),
});
export type IntegrationReportedMessage = Static<typeof IntegrationReportedMessage>;
