/** A pass run on an interval (a sweeper's timer): at most one in flight, on the timer or on demand. */
export interface PeriodicPass {
  /** Starts the timer (unref'd: it never keeps a process alive); a second start does nothing. */
  start: () => void;
  /** Stops the timer and waits for a pass in progress. */
  stop: () => Promise<void>;
  /** One pass now, or the one in flight; resolves to what the pass returns. */
  runOnce: () => Promise<number>;
}

/**
 * `pass` every `intervalMs()` (read at start). A pass that throws is reported to `onError` and the
 * next one tries again; a pass still running when the timer fires is joined, not doubled.
 */
export function createPeriodicPass(pass: () => Promise<number>, options: { intervalMs: () => number; onError: (err: unknown) => void }): PeriodicPass {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<number> | null = null;
  const runOnce = (): Promise<number> => {
    running ??= pass().finally(() => {
      running = null;
    });
    return running;
  };
  return {
    start: () => {
      if (timer !== null) return;
      timer = setInterval(() => {
        runOnce().catch(options.onError);
      }, options.intervalMs());
      timer.unref();
    },
    stop: async () => {
      if (timer !== null) clearInterval(timer);
      timer = null;
      await running?.catch(() => 0);
    },
    runOnce,
  };
}
