import { takeOver, type ToolCallEntry, type ToolCallJournal } from '../tools/tool-call-journal.ts';

/**
 * A tool-call journal in memory for tests of what reads and writes it: `entries` is what a store
 * adapter would hold, `writes` every write in order; `failWrites` makes writes reject (a scope
 * that was lost). `rerun()` is the journal a later execution of the same scope is given.
 */
export interface MemoryJournal extends ToolCallJournal {
  readonly entries: ToolCallEntry[];
  readonly writes: ToolCallEntry[];
  failWrites: boolean;
  rerun(options?: { lapsed?: boolean }): MemoryJournal;
}

export function memoryJournal(prefix = 'scope-1', prior: ToolCallEntry[] = [], lapsed: ToolCallEntry[] = []): MemoryJournal {
  const entries = prior.map((e) => ({ ...e }));
  const journal: MemoryJournal = {
    prior,
    lapsed,
    entries,
    writes: [],
    failWrites: false,
    scope: { scope: prefix },
    keyOf: (n) => `${prefix}:${n}`,
    async write(entry) {
      if (journal.failWrites) throw new Error('the scope is no longer ours');
      journal.writes.push(structuredClone(entry));
      entries[entry.position] = structuredClone(entry);
    },
    rerun(options = {}) {
      const now = entries.map((e) => ({ ...e }));
      if (options.lapsed !== true) return memoryJournal(prefix, now);
      const { journal: taken, lapsed: lapsedNow } = takeOver(now);
      return memoryJournal(prefix, taken, lapsedNow);
    },
  };
  return journal;
}
