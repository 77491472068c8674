import { Errors } from '../errors/errors.ts';
import { PlatformError } from '../errors/platform-error.ts';
import { noFaults, type FaultPoints } from '../faults/fault-points.ts';
import { ToolLoopHalt } from '../models/tool-loop.ts';
import { auditToolCall, type ToolAuditSink, type ToolAuditSubject } from './tool-audit.ts';
import { blockingUnknowns, describeCalls, publicCall, type ToolCallEntry, type ToolCallJournal } from './tool-call-journal.ts';

/** What a state-changing call needs of the tool it calls. */
export interface JournaledTarget {
  tool: string;
  provider_id: string;
  native_tool: string;
  /** Whether the integration honours idempotency keys (a call in doubt is then made again with its key). */
  honoursKeys: () => Promise<boolean>;
  /** The call itself; `is_error` is the server's own failure (an answer). Throws for the platform's side. */
  run(args: Record<string, unknown>, options: { signal?: AbortSignal; idempotencyKey: string }): Promise<{ text: string; is_error: boolean }>;
}

export interface CallEffects {
  audit?: ToolAuditSink;
  now: () => Date;
  warn: (context: Record<string, unknown>, message: string) => void;
  /** This process, named in the journal entries it writes. */
  worker: string;
  /** Crash points of the fault-injection tests (docs/tools.md "Fault points"); absent: none. */
  faults?: FaultPoints;
}

/**
 * The state-changing calls of one execution (a step execution, an invocation), in the order the
 * model makes them, matched against the journal its earlier executions left.
 */
export interface CallSequence {
  /**
   * The next state-changing call: the recorded answer when an earlier execution already made the
   * same call at this position, else the call itself, journaled before the request leaves and as
   * soon as it is answered. Throws `ToolLoopHalt` (the invocation stops; the model is not told)
   * when the call is in doubt or its journal cannot be written.
   */
  call(target: JournaledTarget, args: Record<string, unknown>, argsHash: string, signal?: AbortSignal): Promise<string>;
  /**
   * After the model's last reply: throws `toolCallsInDoubt` when earlier executions journaled
   * calls that this one did not make (its answer would not account for a write that happened).
   */
  finish(): void;
}

/**
 * Opens the execution's sequence over `journal`. Calls a re-run cannot get past (an `unknown`
 * call to an integration that does not honour keys) refuse it at once, before any model call.
 * The journal's `lapsed` entries (cut off with the execution that made them, just marked
 * `unknown` by whoever took the scope over) are audited as `unknown` here.
 */
export async function openCallSequence(journal: ToolCallJournal, subject: ToolAuditSubject, effects: CallEffects): Promise<CallSequence> {
  const faults = effects.faults ?? noFaults;
  const prior = journal.prior;
  for (const entry of journal.lapsed ?? []) {
    await auditToolCall(effects.audit, subject, { ...entry, result: 'unknown', metadata: { ...metadataOf(entry, journal), recovered: true } }, effects.warn);
  }
  const blocking = blockingUnknowns(prior);
  if (blocking.length > 0) {
    throw inDoubt(`an earlier execution was cut off during ${blocking.length} state-changing tool call(s) whose outcome is unknown: ${describeCalls(blocking)}; look the key(s) up in the system of record`, blocking);
  }
  let position = 0;

  async function replay(target: JournaledTarget, earlier: ToolCallEntry): Promise<string> {
    const replayed: ToolCallEntry = { ...earlier, replays: earlier.replays + 1 };
    await write(replayed);
    await auditToolCall(effects.audit, subject, { ...earlier, result: 'replayed', metadata: { ...metadataOf(earlier, journal), original_seq: earlier.audit_seq ?? null } }, effects.warn);
    return answerOf(earlier.native_tool, earlier.is_error === true, earlier.result ?? '');
  }

  async function make(target: JournaledTarget, args: Record<string, unknown>, entry: ToolCallEntry, signal: AbortSignal | undefined): Promise<string> {
    const audit = (result: 'started' | 'success' | 'failure' | 'unknown', extra: Record<string, unknown> = {}) =>
      auditToolCall(effects.audit, subject, { ...entry, result, metadata: { ...metadataOf(entry, journal), ...extra } }, effects.warn);
    faults.reach('tool.before_journal');
    // Audited first, so the journal entry can name its audit entry; a crash between the two
    // leaves a `started` audit entry and no journal entry: nothing was sent, and the re-run's
    // call at this position carries the same key.
    const seq = await audit('started');
    const started: ToolCallEntry = seq === undefined ? entry : { ...entry, audit_seq: seq };
    await write(started);
    faults.reach('tool.journaled');
    const startedMs = effects.now().getTime();
    if (signal?.aborted === true) {
      // Stopped (timed out, cancelled) before the request left: nothing reached the system.
      await writeQuietly({ ...started, state: 'not_sent' });
      await audit('failure', { sent: false, error: 'the invocation was stopped before the request left' });
      throw new ToolLoopHalt(signal.reason);
    }
    let answer: { text: string; is_error: boolean };
    try {
      answer = await target.run(args, { ...(signal === undefined ? {} : { signal }), idempotencyKey: entry.idempotency_key });
    } catch (error) {
      return cutOff(target, started, error, signal, audit);
    }
    faults.reach('tool.answered');
    const answered: ToolCallEntry = { ...started, state: 'answered', is_error: answer.is_error, result: answer.text, answered_at: effects.now().toISOString() };
    // Together: the embedded store commits the two in one group commit (one sync instead of two).
    const outcome = audit(answer.is_error ? 'failure' : 'success', { duration_ms: Math.max(0, effects.now().getTime() - startedMs), started_seq: seq ?? null });
    await Promise.all([write(answered), outcome]);
    faults.reach('tool.recorded');
    return answerOf(target.native_tool, answer.is_error, answer.text);
  }

  /** The call ended without an answer: refused before it left (not sent), or in doubt. */
  async function cutOff(
    target: JournaledTarget,
    started: ToolCallEntry,
    error: unknown,
    signal: AbortSignal | undefined,
    audit: (result: 'failure' | 'unknown', extra?: Record<string, unknown>) => Promise<unknown>,
  ): Promise<never> {
    const message = error instanceof Error ? error.message : String(error);
    if (neverSent(error)) {
      // Nothing reached the system: the position is free again, for this execution's next call
      // (the model is told, and may try again) and for a re-run's. Calls are made one at a time.
      position = started.position;
      await writeQuietly({ ...started, state: 'not_sent' });
      await audit('failure', { sent: false, error: message });
      throw error;
    }
    const unknown: ToolCallEntry = { ...started, state: 'unknown' };
    // Best effort: should it fail (the scope was lost meanwhile), the entry stays `started`,
    // which whoever takes the scope over reads as unknown all the same.
    await writeQuietly(unknown);
    await audit('unknown', { error: message });
    // A cancelled or timed-out invocation ends with its own reason; the journal holds the rest.
    if (signal?.aborted === true) throw new ToolLoopHalt(signal.reason);
    if (started.idempotent_keys) throw new ToolLoopHalt(error);
    throw new ToolLoopHalt(inDoubt(`'${target.tool}' was cut off (${message}); its outcome is unknown: look key ${started.idempotency_key} up in the system of record`, [unknown]));
  }

  async function write(entry: ToolCallEntry): Promise<void> {
    try {
      await journal.write(entry);
    } catch (error) {
      throw new ToolLoopHalt(error);
    }
  }

  async function writeQuietly(entry: ToolCallEntry): Promise<void> {
    await journal.write(entry).catch((err: unknown) => effects.warn({ err, tool: entry.tool, key: entry.idempotency_key }, 'could not journal the end of a tool call'));
  }

  return {
    async call(target, args, argsHash, signal) {
      const n = position++;
      const earlier = prior[n]?.state === 'not_sent' ? undefined : prior[n];
      if (earlier !== undefined) {
        if (earlier.tool !== target.tool || earlier.args_hash !== argsHash) {
          throw new ToolLoopHalt(
            inDoubt(
              `the re-run called '${target.tool}' where an earlier execution journaled ${describeCalls([earlier])} at position ${n} with ${earlier.tool === target.tool ? 'other arguments' : 'another tool'}: it would not repeat a write that may have happened`,
              [earlier],
            ),
          );
        }
        if (earlier.state === 'answered') return replay(target, earlier);
      }
      // New, or in doubt on an integration that honours keys (blocking ones refused at open): made with the original key.
      const entry: ToolCallEntry = {
        position: n,
        idempotency_key: earlier?.idempotency_key ?? journal.keyOf(n),
        tool: target.tool,
        provider_id: target.provider_id,
        native_tool: target.native_tool,
        args_hash: argsHash,
        state: 'started',
        idempotent_keys: await target.honoursKeys(),
        replays: earlier?.replays ?? 0,
        at: effects.now().toISOString(),
        worker: effects.worker,
      };
      return make(target, args, entry, signal);
    },
    finish() {
      const unreached = prior.slice(position).filter((e) => e.state !== 'not_sent' && !(e.state === 'answered' && e.is_error === true));
      if (unreached.length === 0) return;
      throw inDoubt(`the re-run ended without repeating ${unreached.length} state-changing tool call(s) an earlier execution made: ${describeCalls(unreached)}`, unreached);
    },
  };
}

/** The in-doubt error naming the calls a person must look up. */
export function inDoubt(why: string, calls: readonly ToolCallEntry[]): PlatformError {
  return Errors.toolCallsInDoubt(why, calls.map(publicCall));
}

/** Whether `error` is the in-doubt refusal (a step's run ends Escalated on it). */
export function isInDoubt(error: unknown): error is PlatformError {
  return error instanceof PlatformError && error.details?.reason === 'tool_calls_in_doubt';
}

/** An error the integration host raises before any request leaves (docs/integrations.md). */
function neverSent(error: unknown): boolean {
  return error instanceof PlatformError && error.details?.sent === false;
}

function answerOf(tool: string, isError: boolean, text: string): string {
  if (isError) throw new Error(`'${tool}' answered with an error: ${text}`);
  return text;
}

function metadataOf(entry: ToolCallEntry, journal: ToolCallJournal): Record<string, unknown> {
  return { idempotency_key: entry.idempotency_key, position: entry.position, ...journal.scope };
}
