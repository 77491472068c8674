import { createHash } from 'node:crypto';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { AppendLog } from '../store.ts';

/** Same shape and link format as the testkit's `ChainEntry`/`chainLink`, so the chain checks apply. */
export interface ChainEntry {
  writer: string;
  n: number;
  prev: string | null;
  digest?: string;
}

/**
 * Appends `count` chained entries as `writer`, never running more than `maxLead` entries ahead
 * of the other writer (counted as everything in the log that is not ours). Two processes doing
 * this are forced to interleave, whatever the OS scheduler and SQLite's busy back-off do, while
 * still contending for the write lock inside each `maxLead` window. Cannot deadlock: both sides
 * waiting would need each to be more than `maxLead` behind the other.
 */
export async function appendInLockstep(
  log: AppendLog<ChainEntry>,
  writer: string,
  count: number,
  maxLead: number,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let n = 1; n <= count; n++) {
    while ((await log.count()) - (n - 1) < n - 1 - maxLead) {
      if (Date.now() > deadline) throw new Error(`${writer}: the other writer stalled`);
      await yieldToLoop();
    }
    await log.append((tip) => ({
      writer,
      n,
      prev: tip === null ? null : `${tip.writer}#${tip.n}@${tip.seq}`,
      digest: slowDigest(JSON.stringify(tip)),
    }));
  }
}

/**
 * Hashing work like the audit chain's, stretched so the window between reading the tip and
 * writing the entry is wide: an append that did not hold the write lock across it would fork.
 */
function slowDigest(text: string): string {
  let digest = text;
  for (let i = 0; i < 300; i++) digest = createHash('sha256').update(digest).digest('hex');
  return digest;
}
