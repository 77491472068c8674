import { randomUUID } from 'node:crypto';
import { Streams, type EventData, type EventKind, type PlatformEvent } from '@agent-platform/contracts';
import type { Bus } from '@agent-platform/bus';
import type { Clock } from '../time/clock.ts';
import type { EventInterest } from './event-interest.ts';

/** What an emitter gives besides the kind: the agent the event is about, its data, and maybe its id. */
export interface EventInput<K extends EventKind> {
  agent_id: string | null;
  data: EventData<K>;
  /**
   * A deterministic id where the source may emit the same event twice (a redelivered schedule
   * slot, a retried step): the bus de-duplicates by it and triggers claim by it. Default: a UUID.
   */
  id?: string;
}

/**
 * The port every source of platform events emits through (docs/events.md). `emit` publishes one
 * PlatformEvent on the durable stream `platform.events` with the envelope id = the event id.
 *
 * Emitting never fails the operation that emits: the promise always resolves, and a bus error is
 * logged as a warning (the event is lost, the operation stands). Callers on a hot path may leave
 * the promise unawaited.
 */
export interface EventPublisher {
  emit<K extends EventKind>(kind: K, input: EventInput<K>): Promise<void>;
}

export interface EventPublisherDeps {
  bus: Pick<Bus, 'publish'>;
  clock: Clock;
  warn: (context: Record<string, unknown>, message: string) => void;
  newId?: () => string;
  /** Told of each event this process emits, published or not (the metrics count them: `platform_events_total`). */
  onEmit?: (kind: EventKind, data: unknown) => void;
  /**
   * Whether anything could take the event (event-interest.ts); an event nothing could take is
   * counted but not published. A failed check publishes. Default: every event is published.
   */
  interest?: EventInterest;
}

/** The EventPublisher over the bus. */
export function createEventPublisher(deps: EventPublisherDeps): EventPublisher {
  const newId = deps.newId ?? randomUUID;
  return {
    async emit(kind, input) {
      deps.onEmit?.(kind, input.data);
      const now = deps.clock.now().toISOString();
      const event: PlatformEvent = {
        id: input.id ?? newId(),
        kind,
        occurred_at: now,
        agent_id: input.agent_id,
        data: input.data,
      };
      try {
        if (deps.interest !== undefined && !(await interested(deps.interest, event))) return;
        await deps.bus.publish<PlatformEvent>(Streams.platformEvents, { id: event.id, correlation_id: event.id, attempt: 1, occurred_at: now, data: event });
      } catch (err) {
        deps.warn({ err, event_id: event.id, event_kind: kind }, 'could not publish a platform event; it is lost, the operation stands');
      }
    },
  };
}

/** A check that fails (the store unreachable) says yes: the consumers then decide, as before. */
async function interested(interest: EventInterest, event: PlatformEvent): Promise<boolean> {
  try {
    return await interest(event);
  } catch {
    return true;
  }
}

/** Emits nothing: for services composed without events (unit tests of other areas). */
export const noEvents: EventPublisher = { emit: async () => undefined };

/** Cuts long text carried in event data (replies, messages) to `max` characters. */
export function clip(text: string, max = 4000): string {
  return text.length <= max ? text : text.slice(0, max);
}
