import { Subjects, TERMINAL_RUN_STATES } from '@agent-platform/contracts';
import { Errors, runStatus, type WorkflowRunRecord } from '@agent-platform/domain';
import type { FastifyReply } from 'fastify';
import type { ApiDeps } from '../deps.ts';
import { toErrorReply } from '../http/error-handler.ts';
import { lazyEventStream, sseEvent, type WriteFrame } from '../http/event-stream.ts';

/** How often the stream re-reads the run when no change notification came (a lost one only delays). */
const FALLBACK_READ_MS = 2_000;

/**
 * GET /runs/{id}/events (docs/workflows.md "Run events"): `run` with the run as it is now, then
 * `step` for each new step result, `state` for each transition, and `end` with the final run once
 * it is terminal, after which the stream closes. Any api node serves it whatever worker runs the
 * steps: workers notify `workflows.runs.<id>` when they change the run, and the stream re-reads
 * the document on each notification (and every 2 s anyway), so what it sends is always what is
 * stored, in order, never a notification's say-so.
 */
export async function runEventStream(deps: ApiDeps, runId: string, reply: FastifyReply, signal: AbortSignal): Promise<FastifyReply> {
  if ((await deps.workflows.record(runId)) === null) throw Errors.notFound('run', runId);
  return lazyEventStream(
    reply,
    async (write) => {
      const view = createRunView(write);
      let reading: Promise<boolean> = Promise.resolve(false);
      let finished = false;
      const look = (): Promise<boolean> =>
        (reading = reading.then(async () => {
          if (finished) return true;
          const run = await deps.workflows.record(runId);
          finished = run === null || view.show(run);
          return finished;
        }));
      await new Promise<void>((resolve, reject) => {
        let timer: NodeJS.Timeout | undefined;
        const stop = (): void => {
          clearInterval(timer);
          signal.removeEventListener('abort', stop);
          void subscription.then((s) => s.drain());
          resolve();
        };
        const poke = (): void => {
          look().then((done) => done && stop(), (error: unknown) => {
            clearInterval(timer);
            reject(error instanceof Error ? error : new Error(String(error)));
          });
        };
        // Listening before the first read: no change can slip between the two.
        const subscription = deps.bus.listen(Subjects.workflowRunChanged(runId), poke);
        subscription.then(() => {
          timer = setInterval(poke, FALLBACK_READ_MS);
          signal.addEventListener('abort', stop, { once: true });
          poke();
        }, reject);
      });
    },
    (error, write) => write(sseEvent('error', toErrorReply(error).body)),
  );
}

/** What the client has been sent so far; `show` sends what changed and says whether the run is over. */
function createRunView(write: WriteFrame): { show(run: WorkflowRunRecord | null): boolean } {
  let sentResults = -1;
  let state: string | null = null;
  /** The journal entries sent, by step key and position: what each looked like then. */
  const sentCalls = new Map<string, string>();
  return {
    show(run) {
      if (run === null) return true;
      const status = runStatus(run);
      if (sentResults < 0) {
        write(sseEvent('run', status));
        sentResults = run.step_results.length;
        state = run.state;
        for (const call of status.tool_calls ?? []) sentCalls.set(`${call.step_key}/${call.position}`, callLook(call));
      }
      // A tool call journaled, answered, cut off or replayed since (docs/tools.md "The tool-call journal").
      for (const call of status.tool_calls ?? []) {
        const id = `${call.step_key}/${call.position}`;
        if (sentCalls.get(id) === callLook(call)) continue;
        sentCalls.set(id, callLook(call));
        write(sseEvent('tool_call', call));
      }
      for (; sentResults < run.step_results.length; sentResults++) write(sseEvent('step', { index: sentResults, ...run.step_results[sentResults] }));
      if (run.state !== state) {
        state = run.state;
        write(sseEvent('state', { state: run.state, error: run.error }));
      }
      if (!TERMINAL_RUN_STATES.has(run.state)) return false;
      write(sseEvent('end', runStatus(run)));
      return true;
    },
  };
}

/** What about a journaled call the stream reports a change of. */
function callLook(call: { state: string; replays: number; idempotency_key: string }): string {
  return `${call.state}/${call.replays}/${call.idempotency_key}`;
}
