import { TERMINAL_RUN_STATES } from '@agent-platform/contracts';
import type { Bus } from '@agent-platform/bus';
import { workflowRuns, type Clock, type RunEndedHook, type WorkflowRunRecord } from '@agent-platform/domain';
import type { Logger } from '@agent-platform/observability';
import type { Store } from '@agent-platform/store';
import { channelCollections, type ChannelMessageRecord } from './channel-record.ts';
import { publishReply } from './channel-router.ts';

/** Rows looked at per sweep; the rest wait for the next one. */
const SWEEP_PAGE = 200;

/**
 * Publishes the reply of a run a channel message started: its output (Completed) or a short
 * failure text (Failed, Escalated), to the conversation it came from. The envelope id is derived
 * from the run, so publishing it again (a second finalization, the sweep) is the same reply: the
 * bus drops it within its duplicate window, the bridge's `channel_replies` row after that.
 */
export async function publishRunReply(bus: Bus, run: WorkflowRunRecord, at: Date): Promise<boolean> {
  const origin = run.origin?.channel;
  if (origin === undefined) return false;
  const text =
    run.state === 'Completed'
      ? (run.output ?? '')
      : `The workflow '${run.workflow_name}' did not complete (${run.state}): ${run.error ?? 'no detail'}`;
  await publishReply(
    bus,
    runReplyId(run.id),
    {
      channel_id: origin.channel_id,
      conversation: origin.conversation,
      thread: origin.thread,
      text,
      in_reply_to: origin.in_reply_to,
      meta: {},
    },
    at,
  );
  return true;
}

const runReplyId = (runId: string): string => `run:${runId}:reply`;

/**
 * The `onRunEnded` hook of the workflow services: the fast path of a run's reply, from whichever
 * process finalized it. It runs after the run is marked finalized, so a process dying in between
 * (or a bus refusing the publish) would lose the reply: `sweepRunReplies` is the guarantee.
 */
export function channelRunReplies(bus: Bus, clock: Clock): RunEndedHook {
  return async (run) => void (await publishRunReply(bus, run, clock.now()));
}

export interface RunReplySweepDeps {
  store: Store;
  bus: Bus;
  clock: Clock;
  logger: Logger;
}

/**
 * One pass over the messages that started a run (`channel_messages` rows `started`): each whose
 * run ended at least `graceMs` ago is answered, by publishing the run's reply unless a bridge
 * already sent it, then recorded `answered`. With a grace shorter than the bus's duplicate window
 * (30 s against 2 minutes), a reply the hook did publish is dropped as a duplicate; the bridge's
 * row catches a later one. Every worker sweeps; they publish the same envelope id. Returns how
 * many messages it answered.
 */
export async function sweepRunReplies(deps: RunReplySweepDeps, graceMs: number): Promise<number> {
  const { messages } = channelCollections(deps.store);
  let answered = 0;
  // Oldest first, page by page; a row answered leaves the set, so the next page starts earlier.
  for (let offset = 0; ;) {
    const page = await messages.find({
      where: { state: 'started' },
      orderBy: { field: 'at' },
      limit: SWEEP_PAGE,
      offset,
    });
    for (const { doc } of page) {
      if (await answerIfEnded(deps, doc, graceMs)) answered += 1;
      else offset += 1;
    }
    if (page.length < SWEEP_PAGE) return answered;
  }
}

/** Sends (unless sent) the reply of the row's run once it ended, and records the row answered. */
async function answerIfEnded(
  deps: RunReplySweepDeps,
  row: ChannelMessageRecord,
  graceMs: number,
): Promise<boolean> {
  const { messages, replies } = channelCollections(deps.store);
  if (row.run_id === undefined) return false;
  const run = (await workflowRuns(deps.store).get(row.run_id))?.doc;
  const now = deps.clock.now();
  if (run !== undefined) {
    if (!TERMINAL_RUN_STATES.has(run.state)) return false;
    if (Date.parse(run.completed_at ?? run.updated_at) + graceMs > now.getTime()) return false;
    if ((await replies.get(runReplyId(run.id))) === null && (await publishRunReply(deps.bus, run, now)))
      deps.logger.info(
        { channel_id: row.channel_id, message_id: row.id, run_id: run.id },
        'sent the reply of an ended run that its hook had not sent',
      );
  }
  // A run removed before it ended (retention of a long-lost run) has nothing to answer with.
  const outcome =
    run === undefined
      ? { state: 'dropped' as const, detail: 'run not found' }
      : { state: 'answered' as const };
  await messages.update(row.id, (current) =>
    current === null || current.doc.state !== 'started'
      ? null
      : { ...current.doc, ...outcome, at: now.toISOString() },
  );
  return true;
}
