import { setFlagsFromString } from 'node:v8';

/** The growth of V8's old generation after a full collection, in percent; 0 keeps V8's own choice. */
export const DEFAULT_HEAP_GROWING_PERCENT = 50;

/**
 * How far the heap may grow past what a full collection left before the next one (docs/performance.md
 * "Memory"). V8 picks a factor of its own, up to 4x when collections look cheap, which under a steady
 * load of sends let an all-in-one whose live heap is about 80 MB sit at 330-450 MB of RSS; at 1.5x
 * it stays near 250 MB at the same throughput. `AP_HEAP_GROWING_PERCENT` overrides it (0: V8's
 * default). Read once, by the entry-point wrapper, before anything is allocated in earnest.
 */
export function tuneHeap(env: Record<string, string | undefined>): void {
  const raw = env.AP_HEAP_GROWING_PERCENT;
  const percent = raw === undefined || raw === '' ? DEFAULT_HEAP_GROWING_PERCENT : Number(raw);
  if (!Number.isInteger(percent) || percent < 0 || percent > 1000) {
    throw new HeapTuningError(`AP_HEAP_GROWING_PERCENT must be a whole number from 0 to 1000 (0 keeps V8's default), got '${raw ?? ''}'`);
  }
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
}

/** A refused `AP_HEAP_GROWING_PERCENT`: the operator's to fix, printed without a stack. */
export class HeapTuningError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HeapTuningError';
  }
}
