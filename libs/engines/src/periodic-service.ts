import type { ProcessService } from './process-lifecycle.ts';

export interface PeriodicServiceOptions {
  name: string;
  /** The period's length in seconds, read per tick (reloadable); the service ticks four times per period, at most once a minute. */
  intervalSecs: () => number;
  /** One tick's work. It must claim what it does in a shared store when several processes run it. */
  tick: () => Promise<unknown>;
  /** Called once per distinct failure message in a row, not once per tick while a dependency is down. */
  warn: (context: Record<string, unknown>, message: string) => void;
  /** What the warning says, e.g. `audit checkpoint write failed; retrying at the next tick`. */
  failure: string;
  /** Not running at all when false at start (e.g. no sink configured); default true. */
  enabled?: () => boolean;
  /** Milliseconds before the first tick; default one tick interval. */
  firstTickMs?: number;
}

/**
 * A background job every process of a kind runs on a timer (audit checkpoints, retention
 * sweeps): the store claims in `tick` decide which process does the period's work, so that a
 * fleet does it once. `stop` waits for a tick in progress.
 */
export function createPeriodicService(options: PeriodicServiceOptions): ProcessService {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> = Promise.resolve();
  let stopped = true;
  let lastFailure = '';

  const tickMs = (): number => Math.min(60_000, Math.max(100, (options.intervalSecs() * 1000) / 4));

  function schedule(delayMs: number): void {
    if (stopped) return;
    timer = setTimeout(() => {
      timer = null;
      running = tick().finally(() => schedule(tickMs()));
    }, delayMs);
    timer.unref();
  }

  async function tick(): Promise<void> {
    try {
      await options.tick();
      lastFailure = '';
    } catch (error) {
      const message = (error as Error).message;
      if (message !== lastFailure) options.warn({ reason: message }, options.failure);
      lastFailure = message;
    }
  }

  return {
    name: options.name,
    async start() {
      if (options.enabled?.() === false) return;
      stopped = false;
      schedule(options.firstTickMs ?? tickMs());
    },
    async stop() {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
      timer = null;
      await running;
    },
  };
}
