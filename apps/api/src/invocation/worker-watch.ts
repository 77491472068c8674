import { randomUUID } from 'node:crypto';
import { INVOKE_WORKER_LOST_AFTER_MS, Subjects, type AgentInvokeProgress, type AgentInvokeProgressAck } from '@agent-platform/contracts';
import type { Bus, Subscription } from '@agent-platform/bus';

/**
 * A worker that has said nothing for this long is presumed dead: three missed heartbeats. A kill
 * is thus noticed 3 to 4 s after it happens (issue 9 item 6: within 5 s).
 */
export const WORKER_LOST_AFTER_MS = INVOKE_WORKER_LOST_AFTER_MS;
const CHECK_EVERY_MS = 500;

/**
 * The requester's side of the invocation heartbeats (docs/invocation.md "A worker that dies"):
 * one progress subject per process, on which workers say they took each of its invocations and
 * are still running it. An invocation that hears nothing for WORKER_LOST_AFTER_MS (from the moment
 * it was sent, so a worker that died before even taking it counts too) is lost.
 *
 * Heartbeats come as requests (the request had `progress_ack`), answered with whether this process
 * still waits for that invocation: a worker told "no" (the invocation was given up as lost, or its
 * client went away) neither charges nor answers. Workers of the previous version notify instead:
 * a notification is a heartbeat all the same.
 */
export interface WorkerWatch {
  /** The subject to put in each request's `progress_subject`. */
  readonly subject: string;
  /** Watches one invocation from now; `onLost` is called at most once. Returns the stop. */
  watch(invocationId: string, onLost: () => void): Promise<() => void>;
}

interface Watched {
  lastHeardMs: number;
  onLost: () => void;
}

export function createWorkerWatch(bus: Pick<Bus, 'listen' | 'serve'>, now: () => number = () => performance.now()): WorkerWatch {
  const subject = Subjects.agentProgress(randomUUID());
  const watched = new Map<string, Watched>();
  let listening: Promise<Subscription[]> | null = null;
  let timer: NodeJS.Timeout | null = null;

  const check = (): void => {
    const at = now();
    for (const [id, entry] of watched) {
      if (at - entry.lastHeardMs < WORKER_LOST_AFTER_MS) continue;
      watched.delete(id);
      entry.onLost();
    }
    if (watched.size === 0 && timer !== null) {
      clearInterval(timer);
      timer = null;
    }
  };

  /** A heartbeat for `invocationId`: whether it is still waited for. */
  const heard = (invocationId: string): boolean => {
    const entry = watched.get(invocationId);
    if (entry === undefined) return false;
    entry.lastHeardMs = now();
    return true;
  };

  return {
    subject,
    async watch(invocationId, onLost) {
      listening ??= Promise.all([
        bus.serve<AgentInvokeProgress, AgentInvokeProgressAck>(subject, async (progress) => ({ waiting: heard(progress.invocation_id) })),
        // Over NATS a request reaches this listener too (a second, harmless heartbeat).
        bus.listen<AgentInvokeProgress>(subject, (progress) => void heard(progress.invocation_id)),
      ]).catch((error: unknown) => {
        listening = null;
        throw error;
      });
      await listening;
      watched.set(invocationId, { lastHeardMs: now(), onLost });
      if (timer === null) {
        timer = setInterval(check, CHECK_EVERY_MS);
        timer.unref();
      }
      return () => void watched.delete(invocationId);
    },
  };
}
