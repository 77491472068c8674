import type { PlatformEvent } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import type { Clock } from '../time/clock.ts';
import { webhookCollection } from '../webhooks/webhook-record.ts';
import { createTriggerStore } from './trigger-store.ts';
import { mayMatchPattern } from './trigger-pattern.ts';

/**
 * Whether anything could take the event: a trigger whose pattern may match it, or a webhook of
 * its agent (docs/events.md "Where events are published"). The two consumers of `platform.events`
 * (trigger matching, webhook fan-out) do nothing with any other event, so it is not published:
 * on a fleet that spares a JetStream publish, two deliveries, two acknowledgements and two reads
 * per event, on every send of an agent without webhooks.
 *
 * It may say yes to an event nothing takes (a trigger at its cap, a key a newer node knows), never
 * no to one something takes. Triggers and webhooks are read-mostly collections: on the embedded
 * and PostgreSQL stores both reads are answered from memory (on PostgreSQL after a look at the
 * tables' versions, shared by concurrent reads), exact there (docs/performance.md "Read-mostly
 * collections", docs/postgres.md); elsewhere they are two reads that the consumers no longer make.
 */
export type EventInterest = (event: PlatformEvent) => Promise<boolean>;

/** The interest of the triggers and webhooks in `store`. */
export function storedEventInterest(store: Store, clock: Clock): EventInterest {
  const triggers = createTriggerStore(store, clock);
  const webhooks = webhookCollection(store);
  // Both reads at once: on PostgreSQL each is a round trip, and a workflow step awaits its event.
  return async (event) => {
    const [hooked, all] = await Promise.all([
      event.agent_id === null ? false : webhooks.find({ where: { agent_id: event.agent_id }, limit: 1 }).then((found) => found.length > 0),
      triggers.list(),
    ]);
    return hooked || all.some((trigger) => mayMatchPattern(trigger.pattern, event));
  };
}
