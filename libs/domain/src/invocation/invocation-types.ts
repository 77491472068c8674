import type { InvocationOutcome, InvocationSourceWire, PlatformConfig } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import type { AgentRecord } from '../agents/agent-record.ts';
import type { EquippedCompetency } from '../agents/system-prompt.ts';
import type { FaultPoints } from '../faults/fault-points.ts';
import type { AgentStats } from '../agents/agent-stats.ts';
import type { AgentStore } from '../agents/agent-store.ts';
import type { SessionStore } from '../agents/session-store.ts';
import type { LicenceGate } from '../licence/licence-gate.ts';
import type { ModelGateway } from '../gateway/model-gateway.ts';
import type { ModelRegistry } from '../models/model-registry.ts';
import type { ToolBinding } from '../models/tool-loop.ts';
import type { Clock } from '../time/clock.ts';
import type { EventPublisher } from '../events/event-publisher.ts';
import type { ToolCallJournal } from '../tools/tool-call-journal.ts';
import type { InvocationFence } from './invocation-fences.ts';

/**
 * The invocation service's contract: what a caller (send, invoke, chat, a workflow step, a cron
 * fire) hands over, what it gets back, and what the service is built from. The service itself is
 * invocation-service.ts; its three concerns are invocation-admission.ts (may it run?),
 * invocation-execution.ts (prompt, licence, model and tool loop) and invocation-bookkeeping.ts
 * (session, stats, usage).
 */

/** One invocation to run: spec InvocationContext plus the agent it is aimed at. */
export interface InvocationRequest {
  agent_id: string;
  source: InvocationSourceWire;
  message: string;
  idempotency_key?: string;
  correlation_id: string;
  workflow_type?: string;
  /** The caller's identity; idempotency keys are scoped by it (absent: the shared scope `unscoped`). */
  caller?: string;
  /** The caller's role; the privacy gateway's audit entries name it (absent: `system`). */
  caller_role?: string;
  /** Names this invocation for `cancel` (a UUID the api node makes per request). */
  invocation_id?: string;
}

export interface InvocationOptions {
  /** Aborting cancels the invocation (the caller went away); it fails with the signal's reason. */
  signal?: AbortSignal;
  /** Receives the reply text as the provider produces it. */
  onToken?: (text: string) => void;
  /**
   * Waits for a place to run (the agent worker's `[agents] worker_concurrency` slots) and returns
   * its release. Called once, after the idempotency key is claimed, so a repeat waiting for the
   * key's owner holds no place; the wait counts within the invocation timeout.
   */
  acquireSlot?: (signal: AbortSignal) => Promise<() => void>;
  /**
   * Throws when the result could not reach the caller (too large for the bus). Called before the
   * licence is charged and the result remembered, so an undelivered answer costs nothing.
   */
  checkDeliverable?: (result: InvocationOutcome) => void;
  /**
   * The longest this invocation may run, when shorter than `[agents] invocation_timeout_secs`
   * (a workflow step's `timeout_secs`, the legacy step's `timeout`).
   */
  timeoutSecs?: number;
  /**
   * Leaves the agent's canonical session alone: the model sees only the system prompt and this
   * message, and nothing is appended. Workflow steps run so, so a step's output depends on its
   * input alone and a step re-executed after a crash sees what the first execution saw.
   */
  stateless?: boolean;
  /**
   * Where the state-changing tool calls of this execution are journaled (docs/tools.md "The
   * tool-call journal"): a workflow step's run document. Absent: the idempotency record of the
   * invocation's key, or, without a key, nowhere (the calls are only numbered).
   */
  toolJournal?: ToolCallJournal;
  /**
   * The requester may abandon this invocation and send it again (the api, when it presumes the
   * worker lost): without an idempotency key, its first state-changing tool call then takes the
   * invocation's fence first (invocation-fences.ts), and is not made if the requester got there first.
   */
  abandonable?: boolean;
  /** Set by the executor for an abandonable invocation: its fence (invocation-fences.ts), for the tools' journal. */
  fence?: InvocationFence;
  /**
   * Called right before the licence reservation is committed; rejecting stops the invocation
   * uncharged. The agent worker checks there that its requester still waits for the answer.
   */
  beforeCommit?: () => Promise<void>;
  /**
   * Called with the answer in the same turn as the invocation's own writes after it (the key's
   * result, the gateway settle, usage, stats), so that the embedded store commits the writes it
   * makes in the same transaction: a workflow step's checkpoint (docs/workflows.md "How a run
   * executes"). Its rejection does not fail the invocation: the caller keeps the promise and
   * awaits it. `execute` resolves after it settled.
   */
  onAnswered?: (result: InvocationOutcome) => Promise<unknown>;
  /**
   * The agent's rate-limit slot, already asked for by the caller (`takeRateLimit`) in the same
   * turn as a write of its own, so that both share a commit: a workflow step's claim. Admission
   * awaits it at the rate limit's place among its checks instead of taking one.
   */
  rateLimitTaken?: Promise<void>;
}

export interface InvocationExecution {
  result: InvocationOutcome;
  /** True when the idempotency key was already processed: `result` is the one recorded then. */
  duplicate: boolean;
}

/** Runs agent invocations (send, invoke, chat, and later cron fires and workflow steps). */
export interface InvocationService {
  execute(request: InvocationRequest, options?: InvocationOptions): Promise<InvocationExecution>;
  /** Aborts the agent's invocations running in this process (suspend); returns how many. */
  abortAgent(agentId: string, reason?: string): number;
  /**
   * Cancels the invocation with that `invocation_id` if it runs here (true), else remembers the
   * cancel for a while in case the invocation is still on its way (false). It fails, and nothing
   * is charged or remembered under its idempotency key.
   */
  cancel(invocationId: string, reason?: string): boolean;
  /** An idempotency record was settled somewhere (a bus notification): wakes the repeats waiting here. */
  idempotencySettled(recordId: string): void;
  /** Takes one invocation from the agent's rate limit now, for `rateLimitTaken` (throws `RateLimited`). */
  takeRateLimit(agentId: string): Promise<void>;
}

/** USD per million tokens of a provider; absent prices count as 0 (the `local` provider). */
export interface ProviderPrices {
  input_usd_per_mtok?: number | undefined;
  output_usd_per_mtok?: number | undefined;
}

export interface InvocationServiceDeps {
  store: Store;
  clock: Clock;
  agents: Pick<AgentStore, 'get'>;
  sessions: SessionStore;
  stats: AgentStats;
  models: ModelRegistry;
  licence: LicenceGate;
  /** `[agents]` of the running config, read per invocation so a reload applies to the next one. */
  settings: () => PlatformConfig['agents'];
  prices: (providerId: string) => ProviderPrices | undefined;
  /** Bookkeeping after a successful answer that failed (session, usage): logged, never raised. */
  warn?: (context: Record<string, unknown>, message: string) => void;
  /** Tells every process an idempotency record was settled (the worker notifies the bus). */
  announceSettled?: (recordId: string) => void;
  /** The tools an agent's model may call; absent: none (the model only talks). */
  tools?: AgentToolsProvider;
  /** Where `invocation.completed` and `invocation.failed` go (docs/events.md); absent: nowhere. */
  events?: EventPublisher;
  /**
   * The privacy gateway every model request goes through (docs/privacy-gateway.md): tokens for
   * personal data, routing, audit. Absent: the default model, called as it is.
   */
  gateway?: ModelGateway;
  /** Fault injection for the crash tests (docs/tools.md "Fault points"); absent: none. */
  faults?: FaultPoints;
}

/** Where an invocation's tools come from (docs/tools.md): skills, integrations and contracts. */
export interface AgentToolsProvider {
  /**
   * The tools `agent` may call in this invocation (a tool it may not use is not offered), over
   * the execution's journal. Rejects with `toolCallsInDoubt` when the journal holds a call a
   * re-run cannot get past, before any model call.
   */
  toolsFor(agent: AgentRecord, context: ToolContext): Promise<AgentToolSet>;
}

/** The tools of one execution. */
export interface AgentToolSet {
  bindings: ToolBinding[];
  /** After the model's last reply: throws when earlier executions journaled calls this one did not repeat. */
  finish(): void;
}

/** What a tool knows of the invocation that calls it (audit, idempotency keys, the step journal). */
export interface ToolContext {
  request: InvocationRequest;
  options: InvocationOptions;
  signal: AbortSignal;
  /**
   * The agent's equipped competencies as this invocation read them for its system prompt, so the
   * tools come from the same records without reading them again; absent: read by the provider.
   */
  competencies?: EquippedCompetency[];
}
