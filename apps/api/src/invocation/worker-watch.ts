import { randomUUID } from 'node:crypto';
import { INVOKE_HEARTBEAT_MS, Subjects, type AgentInvokeProgress } from '@agent-platform/contracts';
import type { Bus, Subscription } from '@agent-platform/bus';

/**
 * A worker that has said nothing for this long is presumed dead: three missed heartbeats. A kill
 * is thus noticed 3 to 4 s after it happens (issue 9 item 6: within 5 s).
 */
export const WORKER_LOST_AFTER_MS = 3 * INVOKE_HEARTBEAT_MS;
const CHECK_EVERY_MS = 500;

/**
 * The requester's side of the invocation heartbeats (docs/invocation.md "A worker that dies"):
 * one progress subject per process, listened to once, on which workers say they took each of its
 * invocations and are still running it. An invocation that hears nothing for WORKER_LOST_AFTER_MS
 * (from the moment it was sent, so a worker that died before even taking it counts too) is lost.
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

export function createWorkerWatch(bus: Pick<Bus, 'listen'>, now: () => number = Date.now): WorkerWatch {
  const subject = Subjects.agentProgress(randomUUID());
  const watched = new Map<string, Watched>();
  let listening: Promise<Subscription> | null = null;
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

  return {
    subject,
    async watch(invocationId, onLost) {
      listening ??= bus
        .listen<AgentInvokeProgress>(subject, (progress) => {
          const entry = watched.get(progress.invocation_id);
          if (entry !== undefined) entry.lastHeardMs = now();
        })
        .catch((error: unknown) => {
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
