import { MAX_TRIGGER_CHAIN, type PlatformEvent, type TriggerSource } from '@agent-platform/contracts';
import type { AgentStore } from '../agents/agent-store.ts';
import { noFaults, type FaultPoints } from '../faults/fault-points.ts';
import { matchesPattern } from './trigger-pattern.ts';
import type { TriggerRecord, TriggerStore } from './trigger-store.ts';

/** One invocation a trigger asks for; the composition root sends it to an agent worker. */
export interface TriggerInvocation {
  agent_id: string;
  message: string;
  source: TriggerSource;
  /** `trigger:<trigger id>:<event id>`: a repeat that slips past the claim runs the agent once. */
  idempotency_key: string;
  correlation_id: string;
}

export interface TriggerMatcherDeps {
  triggers: TriggerStore;
  agents: Pick<AgentStore, 'get'>;
  /** Runs the invocation on an agent worker; rejects when it failed. */
  invoke: (invocation: TriggerInvocation) => Promise<void>;
  warn: (context: Record<string, unknown>, message: string) => void;
  /**
   * The lease of a `running` fire record (default 30 s), renewed every third of it while the fire
   * goes on: past it, the sweep (`TriggerStore.sweepLost`) records the fire lost.
   */
  leaseMs?: () => number;
  /** Crash tests stop the process at `trigger.before_invoke` (docs/tools.md "Fault points"). */
  faults?: FaultPoints;
}

export interface TriggerMatcher {
  /** Matches one event against every trigger and fires the matches; resolves when they finished. */
  handle(event: PlatformEvent): Promise<void>;
}

/** A `running` fire record's lease when the composition root sets none. */
const DEFAULT_FIRE_LEASE_MS = 30_000;

const PLACEHOLDER = /\{\{\s*event\s*\}\}/g;

/** spec §Triggers: `{{event}}` is the event, as JSON. */
export function renderTriggerPrompt(template: string, event: PlatformEvent): string {
  const json = JSON.stringify(event);
  return template.replace(PLACEHOLDER, () => json);
}

/** The trigger chain an event carries (docs/events.md "Loops"): [] when no trigger caused it. */
export function chainOf(event: PlatformEvent): string[] {
  const chain = event.data['trigger_chain'];
  return Array.isArray(chain) ? chain.filter((id): id is string => typeof id === 'string') : [];
}

/**
 * The trigger side of the platform events (docs/events.md "Triggers"). For each trigger whose
 * pattern matches, in order:
 * 1. an event caused by this trigger (its id in the event's chain), or a chain already
 *    MAX_TRIGGER_CHAIN long, does not fire it (recorded `skipped_loop`);
 * 2. the fire record `<trigger>:<event>` is inserted: the claim. Whoever loses it (a redelivery,
 *    a second consumer) stops, so one event fires one trigger at most once, ever;
 * 3. a Suspended agent does not work (D9): recorded `skipped_suspended`, no fire counted;
 * 4. one fire is taken from `max_fires` by an atomic update of the trigger (exact across every
 *    process); none left: `skipped_max_fires`;
 * 5. the agent is invoked with the rendered prompt; `fired` or `failed` is recorded.
 * From 2 to the end, the fire record's lease is renewed. A crash in between loses that fire (at
 * most once, never twice): its lease lapses and a sweep on any worker records it `failed`
 * (LOST_FIRE_ERROR) instead of leaving it `running`.
 */
export function createTriggerMatcher(deps: TriggerMatcherDeps): TriggerMatcher {
  const leaseMs = (): number => deps.leaseMs?.() ?? DEFAULT_FIRE_LEASE_MS;
  const faults = deps.faults ?? noFaults;

  async function fire(trigger: TriggerRecord, event: PlatformEvent, chain: string[]): Promise<void> {
    const base = { trigger_id: trigger.id, event_id: event.id, event_kind: event.kind };
    if (chain.includes(trigger.id) || chain.length >= MAX_TRIGGER_CHAIN) {
      const why = chain.includes(trigger.id) ? 'the event was caused by this trigger' : `the event ends a chain of ${chain.length} triggers`;
      await deps.triggers.claim({ ...base, outcome: 'skipped_loop', error: why });
      return;
    }
    if (!(await deps.triggers.claim({ ...base, outcome: 'running' }, leaseMs()))) return;
    const heartbeat = setInterval(() => {
      deps.triggers.renew(trigger.id, event.id, leaseMs()).catch((err: unknown) => deps.warn({ err, trigger_id: trigger.id, event_id: event.id }, 'could not renew a trigger fire lease'));
    }, Math.max(100, Math.floor(leaseMs() / 3)));
    heartbeat.unref();
    try {
      await fireClaimed(trigger, event, chain);
    } finally {
      clearInterval(heartbeat);
    }
  }

  /** Steps 3 to 5 of a fire this process claimed. */
  async function fireClaimed(trigger: TriggerRecord, event: PlatformEvent, chain: string[]): Promise<void> {
    const agent = await deps.agents.get(trigger.agent_id);
    if (agent === null) {
      // Its agent was uninstalled while the event travelled; the uninstall removes its triggers.
      await deps.triggers.finish(trigger.id, event.id, 'failed', `agent '${trigger.agent_id}' no longer exists`);
      return;
    }
    if (agent.state !== 'Running') {
      await deps.triggers.finish(trigger.id, event.id, 'skipped_suspended', `agent ${agent.name} is ${agent.state}`);
      return;
    }
    const taken = await deps.triggers.takeFire(trigger.id);
    if (!taken.taken) {
      await deps.triggers.finish(trigger.id, event.id, 'skipped_max_fires', taken.trigger === null ? 'the trigger was deleted' : `max_fires ${trigger.max_fires} reached`);
      return;
    }
    const key = `trigger:${trigger.id}:${event.id}`;
    faults.reach('trigger.before_invoke');
    try {
      await deps.invoke({
        agent_id: trigger.agent_id,
        message: renderTriggerPrompt(trigger.prompt_template, event),
        source: { Trigger: { trigger_id: trigger.id, event_id: event.id, event_kind: event.kind, chain: [...chain, trigger.id] } },
        idempotency_key: key,
        correlation_id: key,
      });
      await deps.triggers.finish(trigger.id, event.id, 'fired');
    } catch (error) {
      await deps.triggers.finish(trigger.id, event.id, 'failed', describe(error));
    }
  }

  return {
    async handle(event) {
      const all = await deps.triggers.list();
      // A trigger already at its cap is passed over without a record; racing ones record `skipped_max_fires`.
      const matching = all.filter((t) => !(t.max_fires > 0 && t.fires_count >= t.max_fires) && matchesPattern(t.pattern, event));
      const chain = chainOf(event);
      await Promise.all(
        matching.map((trigger) =>
          fire(trigger, event, chain).catch((err: unknown) => {
            deps.warn({ err, trigger_id: trigger.id, event_id: event.id }, 'could not handle a trigger match');
            throw err;
          }),
        ),
      );
    },
  };
}

function describe(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const e = error as { remote?: { category?: string; message?: string }; category?: unknown; message?: unknown };
    if (e.remote?.category !== undefined) return `${e.remote.category}: ${e.remote.message ?? ''}`;
    if (typeof e.category === 'string') return `${e.category}: ${String(e.message)}`;
    if (typeof e.message === 'string') return e.message;
  }
  return String(error);
}
