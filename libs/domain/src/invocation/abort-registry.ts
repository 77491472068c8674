/**
 * The in-flight invocations of this process, by agent, so that a suspend (an `agents.abort`
 * notification, which reaches every worker) can abort them wherever they run.
 */
export interface AbortRegistry {
  /** Tracks a controller until the returned function is called. */
  track(agentId: string, controller: AbortController): () => void;
  /** Aborts every tracked controller of the agent with `reason`; returns how many. */
  abortAgent(agentId: string, reason: unknown): number;
}

export function createAbortRegistry(): AbortRegistry {
  const byAgent = new Map<string, Set<AbortController>>();
  return {
    track(agentId, controller) {
      let set = byAgent.get(agentId);
      if (set === undefined) byAgent.set(agentId, (set = new Set()));
      set.add(controller);
      return () => {
        set.delete(controller);
        if (set.size === 0 && byAgent.get(agentId) === set) byAgent.delete(agentId);
      };
    },
    abortAgent(agentId, reason) {
      const set = byAgent.get(agentId);
      if (set === undefined) return 0;
      for (const controller of set) controller.abort(reason);
      return set.size;
    },
  };
}
