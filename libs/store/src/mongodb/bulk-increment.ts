import type { CounterDelta } from '../store.ts';

/**
 * `Counters.addMany` on MongoDB, written against one operation so that its retry rule is
 * unit-tested without a server: `write(batch)` sends the deltas as one unordered bulk write of
 * upserting `$inc`s and returns the positions (in `batch`) of the ones that failed with a
 * duplicate key, and throws for anything else.
 *
 * An upserting `$inc` on `_id` is atomic for its document, so concurrent batches never lose an
 * increment. The one failure worth retrying is the first-insert race: two writers upsert the same
 * new key, one insert loses on `_id` and changes nothing, and sending it again matches the
 * winner's document. Those, and only those, are sent again; any other error is thrown, and the
 * deltas the server had already applied stay applied (the port promises per-key atomicity only).
 */
export type BulkIncrementWrite = (batch: readonly CounterDelta[]) => Promise<number[]>;

/** A duplicate key on the same key over and over means a bug or a storm, not a race. */
export const MAX_BULK_INCREMENT_ATTEMPTS = 3;

export async function bulkIncrement(
  deltas: ReadonlyArray<CounterDelta>,
  write: BulkIncrementWrite,
): Promise<void> {
  for (const { delta } of deltas) {
    if (!Number.isSafeInteger(delta))
      throw new RangeError(`counters: delta must be an integer, got ${String(delta)}`);
  }
  let pending: readonly CounterDelta[] = deltas.filter(({ delta }) => delta !== 0);
  for (let attempt = 1; pending.length > 0; attempt++) {
    const failed = await write(pending);
    if (failed.length > 0 && attempt >= MAX_BULK_INCREMENT_ATTEMPTS) {
      const keys = failed.map((index) => pending[index]?.key).join(', ');
      throw new Error(`counters: first increments of ${keys} kept losing the insert race; giving up`);
    }
    pending = failed.map((index) => pending[index]).filter((d): d is CounterDelta => d !== undefined);
  }
}
