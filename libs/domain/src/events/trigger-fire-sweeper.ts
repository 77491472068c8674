import { createPeriodicPass } from '../time/periodic-pass.ts';
import type { TriggerStore } from './trigger-store.ts';

/** Records lost trigger fires (docs/events.md "Triggers"): every agent worker runs one. */
export interface TriggerFireSweeper {
  start(): void;
  /** Stops the timer and waits for a sweep in progress. */
  stop(): Promise<void>;
  /** One pass: how many `running` fires with a lapsed lease were recorded lost. */
  sweepOnce(): Promise<number>;
}

export interface TriggerFireSweeperDeps {
  triggers: Pick<TriggerStore, 'sweepLost'>;
  intervalMs: () => number;
  warn: (context: Record<string, unknown>, message: string) => void;
}

/**
 * A fire whose worker died between its claim and its end (a crash, a kill -9) would stay
 * `running` until its record expires: nothing else ever finishes it, since a redelivered event
 * finds the claim and stops (at most once). Each pass records such fires, whose lease the dead
 * worker no longer renews, `failed` with LOST_FIRE_ERROR. Several workers sweeping at once is
 * harmless: each record is changed by one versioned update that checks the lease again.
 */
export function createTriggerFireSweeper(deps: TriggerFireSweeperDeps): TriggerFireSweeper {
  const periodic = createPeriodicPass(() => deps.triggers.sweepLost(), {
    intervalMs: deps.intervalMs,
    onError: (err) => deps.warn({ err }, 'trigger fire sweep failed; the next one tries again'),
  });
  return { start: periodic.start, stop: periodic.stop, sweepOnce: periodic.runOnce };
}
