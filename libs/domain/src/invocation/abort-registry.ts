/**
 * The in-flight invocations of this process, by agent and by invocation id, so that a suspend
 * (an `agents.abort` notification) and a cancel (`agents.cancel`, the caller went away), which
 * both reach every worker, can stop them wherever they run.
 *
 * A cancel can overtake its invocation: the caller gives up while the request is still on its
 * way to a worker, or waiting for a slot. Such a cancel is remembered for `rememberMs` (at most
 * `MAX_REMEMBERED` ids), and `track` of that id aborts at once.
 */
export interface AbortRegistry {
  /** Tracks a controller until the returned function is called. */
  track(agentId: string, controller: AbortController, invocationId?: string): () => void;
  /** Aborts every tracked controller of the agent with `reason`; returns how many. */
  abortAgent(agentId: string, reason: unknown): number;
  /** Aborts the invocation with that id, or remembers the cancel for when it arrives; true when it ran here. */
  cancel(invocationId: string, reason: unknown): boolean;
}

/** Bounds the memory of cancels that matched nothing here (most ran on another worker). */
const MAX_REMEMBERED = 10_000;

export function createAbortRegistry(options: { rememberMs: () => number; now?: () => number }): AbortRegistry {
  const now = options.now ?? Date.now;
  const byAgent = new Map<string, Set<AbortController>>();
  const byInvocation = new Map<string, AbortController>();
  /** Cancelled ids not (yet) seen here, and until when they are remembered; oldest first. */
  const cancelled = new Map<string, { until: number; reason: unknown }>();

  const forgetExpired = (): void => {
    const at = now();
    for (const [id, entry] of cancelled) {
      if (entry.until > at && cancelled.size <= MAX_REMEMBERED) break;
      cancelled.delete(id);
    }
  };

  return {
    track(agentId, controller, invocationId) {
      let set = byAgent.get(agentId);
      if (set === undefined) byAgent.set(agentId, (set = new Set()));
      set.add(controller);
      if (invocationId !== undefined) {
        byInvocation.set(invocationId, controller);
        forgetExpired();
        const early = cancelled.get(invocationId);
        if (early !== undefined) {
          cancelled.delete(invocationId);
          controller.abort(early.reason);
        }
      }
      return () => {
        set.delete(controller);
        if (set.size === 0 && byAgent.get(agentId) === set) byAgent.delete(agentId);
        if (invocationId !== undefined && byInvocation.get(invocationId) === controller) byInvocation.delete(invocationId);
      };
    },
    abortAgent(agentId, reason) {
      const set = byAgent.get(agentId);
      if (set === undefined) return 0;
      for (const controller of set) controller.abort(reason);
      return set.size;
    },
    cancel(invocationId, reason) {
      const controller = byInvocation.get(invocationId);
      if (controller !== undefined) {
        controller.abort(reason);
        return true;
      }
      cancelled.delete(invocationId);
      cancelled.set(invocationId, { until: now() + options.rememberMs(), reason });
      forgetExpired();
      return false;
    },
  };
}
