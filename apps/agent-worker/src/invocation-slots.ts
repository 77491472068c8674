/**
 * At most `max()` invocations run at once on one worker; the others wait here in arrival order.
 * `max` is read whenever a slot frees up or is asked for, so a config reload applies without a
 * restart (a lower limit lets the running ones finish). A waiter whose signal aborts leaves the
 * line with the signal's reason and never runs.
 */
export interface InvocationSlots {
  /** A slot at once (returns its release), or null when the worker is full or others wait. */
  tryAcquire(): (() => void) | null;
  /** Resolves once a slot is held, with the function that gives it back (idempotent). */
  acquire(signal: AbortSignal): Promise<() => void>;
  readonly running: number;
  readonly waiting: number;
}

interface Waiter {
  grant: () => void;
  signal: AbortSignal;
}

export function createInvocationSlots(max: () => number): InvocationSlots {
  let running = 0;
  const line: Waiter[] = [];

  const releaser = (): (() => void) => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      running--;
      admit();
    };
  };

  function admit(): void {
    while (line.length > 0 && running < max()) {
      const next = line.shift()!;
      if (next.signal.aborted) continue;
      running++;
      next.grant();
    }
  }

  return {
    get running() {
      return running;
    },
    get waiting() {
      return line.length;
    },
    tryAcquire() {
      if (line.length > 0 || running >= max()) return null;
      running++;
      return releaser();
    },
    acquire(signal) {
      if (signal.aborted) return Promise.reject(signal.reason as Error);
      const now = this.tryAcquire();
      if (now !== null) return Promise.resolve(now);
      return new Promise((resolve, reject) => {
        const waiter: Waiter = {
          signal,
          grant: () => {
            signal.removeEventListener('abort', onAbort);
            resolve(releaser());
          },
        };
        const onAbort = (): void => {
          const at = line.indexOf(waiter);
          if (at >= 0) line.splice(at, 1);
          reject(signal.reason as Error);
        };
        signal.addEventListener('abort', onAbort, { once: true });
        line.push(waiter);
      });
    },
  };
}
