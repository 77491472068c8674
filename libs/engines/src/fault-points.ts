import { writeSync } from 'node:fs';
import { FAULT_POINTS, noFaults, type FaultPoint, type FaultPoints } from '@agent-platform/domain';

/** The environment variable naming the fault points a test process stops at. */
export const FAULT_STOP_ENV = 'AP_FAULT_STOP_AT';

/**
 * Fault injection for the crash tests (docs/tools.md "Fault points"): started with
 * `AP_FAULT_STOP_AT=<point>[,<point>...]`, the process stops itself (SIGSTOP) the first time it
 * reaches each named point, after one line on stderr saying so, and the test then kills it with
 * SIGKILL (a crash at exactly that point) or lets it go on with SIGCONT (a pause: another worker
 * takes over meanwhile). Without the variable every point passes: this is `noFaults`. A name that
 * is not a fault point refuses to start, so a test cannot silently stop nowhere.
 */
export function faultPointsFromEnv(env: Record<string, string | undefined>): FaultPoints {
  const raw = env[FAULT_STOP_ENV]?.trim() ?? '';
  if (raw === '') return noFaults;
  const pending = new Set<string>(raw.split(',').map((p) => p.trim()).filter(Boolean));
  for (const point of pending) {
    if (!(FAULT_POINTS as readonly string[]).includes(point)) throw new Error(`${FAULT_STOP_ENV}: '${point}' is not a fault point (${FAULT_POINTS.join(', ')})`);
  }
  return {
    reach(point: FaultPoint) {
      if (!pending.delete(point)) return;
      writeSync(2, `fault point ${point} reached: stopping (pid ${process.pid})\n`);
      process.kill(process.pid, 'SIGSTOP');
    },
  };
}
