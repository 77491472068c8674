/**
 * `Counters.add` with a limit, written against three single-document operations so that the
 * race handling is unit-tested without a server. Each operation is atomic on its own; the loop
 * only ever applies an add through one of them, which is what keeps the limit exact:
 *
 * - `incrementIfAtMost(ceiling)`: `value += delta` only where `value <= ceiling` (= limit - delta),
 *   one conditional `findOneAndUpdate`. It cannot push the value past the limit.
 * - `read()`: after a miss, tells "absent" from "over the limit".
 * - `insertIfAbsent(value)`: creates the counter at `delta`; false when someone created it first.
 *
 * A miss followed by a read that says the add would now fit (a concurrent decrement), or a lost
 * first-insert race, is retried: neither changed anything yet.
 */
export interface LimitedAddOps {
  incrementIfAtMost(ceiling: number): Promise<number | null>;
  read(): Promise<number | null>;
  insertIfAbsent(value: number): Promise<boolean>;
}

export type AfterMiss = { kind: 'refuse'; value: number } | { kind: 'insert' } | { kind: 'retry' };

/** What to do after the conditional increment matched nothing and the counter reads `current`. */
export function decideAfterMiss(current: number | null, delta: number, limit: number): AfterMiss {
  if (current === null) return delta > limit ? { kind: 'refuse', value: 0 } : { kind: 'insert' };
  return current + delta > limit ? { kind: 'refuse', value: current } : { kind: 'retry' };
}

/** Retries only follow a concurrent write to the same counter; this many in a row means a bug or a storm. */
export const MAX_LIMITED_ADD_ATTEMPTS = 50;

export async function addWithinLimit(
  ops: LimitedAddOps,
  key: string,
  delta: number,
  limit: number,
): Promise<{ value: number; applied: boolean }> {
  for (let attempt = 0; attempt < MAX_LIMITED_ADD_ATTEMPTS; attempt++) {
    const after = await ops.incrementIfAtMost(limit - delta);
    if (after !== null) return { value: after, applied: true };
    const decision = decideAfterMiss(await ops.read(), delta, limit);
    if (decision.kind === 'refuse') return { value: decision.value, applied: false };
    if (decision.kind === 'insert' && (await ops.insertIfAbsent(delta)))
      return { value: delta, applied: true };
  }
  throw new Error(
    `counters: '${key}' kept changing under ${MAX_LIMITED_ADD_ATTEMPTS} limited adds in a row; giving up`,
  );
}
