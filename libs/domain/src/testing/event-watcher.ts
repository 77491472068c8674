import type { TriggerPattern } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import { createTriggerStore } from '../events/trigger-store.ts';
import { TRIGGER_PATTERN_KEYS } from '../events/trigger-pattern.ts';
import { systemClock } from '../time/clock.ts';

/**
 * For tests that read `platform.events` with a durable of their own: a trigger on every pattern
 * key, for an agent that does not exist, so that every event is one something takes and is
 * published (event-interest.ts). Each event it matches records a `failed` fire (no such agent).
 */
export async function watchAllEvents(store: Store): Promise<void> {
  const pattern: TriggerPattern = Object.fromEntries(Object.keys(TRIGGER_PATTERN_KEYS).map((key) => [key, {}]));
  await createTriggerStore(store, systemClock).insert({ agent_id: 'event-watcher', pattern, prompt_template: '{{event}}', max_fires: 0 });
}
