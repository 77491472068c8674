import { Errors } from '../errors/errors.ts';
import type { ToolCallEntry, ToolCallJournal } from '../tools/tool-call-journal.ts';

/**
 * The tool-call journal of an invocation with an idempotency key (docs/tools.md "The tool-call
 * journal"), kept in the key's idempotency record (`tool_calls`): every run of the key, whatever
 * worker takes it, sees what the earlier runs called and was answered. Each write is one
 * read-modify-write of the record, only while this run still owns the key (its claim token), so
 * a run that lost the key can neither journal a call (and then does not make it) nor record an
 * answer over the next owner's. The key of position `n` is `<idempotency record id>:<n>`, derived
 * from the caller, the agent and the client's key: every retry of one request carries the same.
 */
export function claimJournal(
  claimed: { id: string; prior: ToolCallEntry[]; lapsed: ToolCallEntry[] },
  writeIfOurs: (change: (journal: ToolCallEntry[]) => ToolCallEntry[]) => Promise<boolean>,
): ToolCallJournal {
  return {
    prior: claimed.prior,
    lapsed: claimed.lapsed,
    scope: { idempotency_record: claimed.id },
    keyOf: (n) => `${claimed.id}:${n}`,
    async write(entry) {
      const ours = await writeIfOurs((journal) => {
        const next = [...journal];
        next[entry.position] = entry;
        return next;
      });
      if (!ours) {
        const what = entry.state === 'started' ? 'was not called' : `ended '${entry.state}' but that could not be recorded`;
        throw Errors.invocationCancelled(`the invocation no longer owns its idempotency key (it was taken over): '${entry.tool}' ${what}`);
      }
    },
  };
}
