import { randomUUID } from 'node:crypto';
import { TERMINAL_RUN_STATES, type JournaledToolCall, type PlatformConfig, type WorkflowStepMessage } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import type { AgentRecord } from '../agents/agent-record.ts';
import type { AgentStore } from '../agents/agent-store.ts';
import { Errors } from '../errors/errors.ts';
import { PlatformError } from '../errors/platform-error.ts';
import type { InvocationService } from '../invocation/invocation-service.ts';
import type { LicenceGate } from '../licence/licence-gate.ts';
import type { Clock } from '../time/clock.ts';
import { applyOutcome, escalateIfUnsafe, leaseLive, type StepOutcome } from './planner/run-planner.ts';
import { renderPrompt } from './render-prompt.ts';
import type { RunBus, Warn } from './run-bus.ts';
import { finalizeRun, type RunEndedHook } from './run-finalizer.ts';
import type { EventPublisher } from '../events/event-publisher.ts';
import { journalOf, workflowRuns, type PendingStep, type WorkflowRunRecord } from './run-record.ts';
import { transitionRun } from './run-transition.ts';
import { agentLabel, collectAgentOf, stepAgent } from './step-agents.ts';
import { createStepJournal } from './step-journal.ts';
import { isInDoubt } from '../tools/journaled-calls.ts';
import type { ToolAuditSink } from '../tools/tool-audit.ts';
import { auditRecoveredCalls, WORKFLOW_CALLER } from './recovered-calls.ts';
import type { ToolCallEntry } from '../tools/tool-call-journal.ts';

export interface StepExecutorDeps {
  store: Store;
  clock: Clock;
  agents: Pick<AgentStore, 'get' | 'getByName'>;
  invocation: Pick<InvocationService, 'execute' | 'takeRateLimit'>;
  licence: Pick<LicenceGate, 'releaseRun'>;
  runBus: RunBus;
  settings: () => PlatformConfig['workflows'];
  /** This process (a UUID): the holder named in the leases it takes. */
  holder: string;
  /** Asks for the run to be looked at when a retry falls due (RunSweeper.wake). */
  wake?: (runId: string, at: string) => void;
  warn: Warn;
  /** Where `workflow.step.completed` and the terminal events go (docs/events.md). */
  events?: EventPublisher;
  /** See run-finalizer.ts `onRunEnded`. */
  onRunEnded?: RunEndedHook | undefined;
  /**
   * Told of each execution this process ran, once its outcome is known (the worker counts them:
   * `workflow_steps_total`, docs/observability.md). `mode` is the step mode's name (`Loop` for
   * `{Loop: ...}`); `aborted` when the run was cancelled or the lease lost meanwhile.
   */
  onStepExecuted?: (sample: StepExecutionSample) => void;
  /** Where a run escalated at takeover records its calls in doubt as `unknown` (docs/tools.md "The audit trail"). */
  audit?: ToolAuditSink;
}

export interface StepExecutionSample {
  mode: string;
  outcome: 'succeeded' | 'failed' | 'deferred' | 'escalated' | 'aborted';
  seconds: number;
}

/** The run's next step, dispatched by a checkpoint to the process that wrote it (see `handle`). */
export interface StepContinuation {
  message: WorkflowStepMessage;
  entry: PendingStep;
  /** The run as that checkpoint left it: what `handle` looks ahead in instead of reading it again. */
  run: WorkflowRunRecord;
}

/** Runs workflow steps on an agent worker (docs/workflows.md "How a run executes"). */
export interface StepExecutor {
  /**
   * One `workflow.steps` message, start to checkpoint. Domain failures settle the step; only I/O
   * errors throw (redelivery). When the checkpoint dispatched exactly one step (the next step of a
   * Sequential run, a Collect after its group), it is not published: it is returned, for the
   * caller to run here next as if it had been delivered (no bus hop between the steps of a run;
   * docs/workflows.md "How a run executes"). Null otherwise. `known`: the run as a continuation
   * carries it (a hint for what the claim will find; the claim itself reads the run to write it).
   */
  handle(message: WorkflowStepMessage, known?: WorkflowRunRecord): Promise<StepContinuation | null>;
  /** Publishes a continuation this process will not run after all (its run failed on I/O): the fleet takes it. */
  handOff(continuation: StepContinuation): Promise<void>;
  /** Aborts this process's executions of the run (it was cancelled); returns how many. */
  cancelRun(runId: string, reason: string): number;
}

/** The step's agent and its rate-limit slot, when `ahead` found them before the claim. */
type Ahead = { agent: AgentRecord | null; rateLimitTaken: Promise<void> | undefined };
/** The pending step `key` of `run` if a worker may claim it at `at`: the run Running, the step dispatched, due, and held by no live lease. */
function claimable(run: WorkflowRunRecord, key: string, at: Date): PendingStep | null {
  const entry = run.pending[key];
  if (run.state !== 'Running' || entry === undefined || entry.dispatched_at === null) return null;
  if (Date.parse(entry.due_at) > at.getTime() || leaseLive(entry, at)) return null;
  return entry;
}

type CollectAgent = Awaited<ReturnType<typeof collectAgentOf>>;
type Recorded = { run: WorkflowRunRecord; result: { planned: ReturnType<typeof applyOutcome>; othersInFlight: boolean } };

interface Claimed {
  run: WorkflowRunRecord;
  entry: PendingStep;
  token: string;
}

/**
 * A message names a pending step; the run document decides whether it runs. The executor:
 * 1. claims the step: one write that gives this process a lease on it, only if the run is
 *    Running, the step is still pending, due, and nobody holds a live lease (a redelivered or
 *    re-dispatched copy of a message finds the lease, or the checkpoint, and does nothing);
 * 2. invokes the agent (stateless, with the step's timeout), renewing the lease every third of
 *    `lease_secs`; losing the lease (the run was cancelled, another process took over after a
 *    pause), or failing to renew it until it is about to lapse, aborts the invocation;
 * 3. checkpoints: one write that records the outcome, applies the step and error modes (planner)
 *    and marks the next steps dispatched, fenced by the lease token so only the claim's own
 *    execution can settle it; then publishes those steps.
 * A crash between 3's write and the publish leaves dispatched-but-unpublished steps: overdue,
 * the sweeper publishes them. A crash during 2 leaves a lapsing lease: the sweeper re-dispatches.
 * Either way a checkpointed step never runs again.
 */
export function createStepExecutor(deps: StepExecutorDeps): StepExecutor {
  const runs = workflowRuns(deps.store);
  const now = (): Date => deps.clock.now();
  const running = new Map<string, Set<AbortController>>();
  const options = () => ({ now, redispatchAfterMs: deps.settings().redispatch_after_secs * 1000 });
  const leaseMs = (): number => deps.settings().lease_secs * 1000;

  async function claim(message: WorkflowStepMessage): Promise<Claimed | 'escalated' | null> {
    const token = randomUUID();
    // `entry` null: the run was escalated instead (the lapsed calls are in doubt).
    type Taken = { entry: PendingStep | null; lapsed: ToolCallEntry[] } | null;
    const done = await transitionRun(runs, message.run_id, options(), (draft): Taken => {
      const at = now();
      const entry = claimable(draft, message.step_key, at);
      if (entry === null) return null;
      // Nobody holds it: whatever an earlier execution journaled and left `started` is in doubt,
      // and decides whether the step may run again (docs/tools.md "The tool-call journal").
      const { escalated, lapsed } = escalateIfUnsafe(draft, entry, at);
      if (escalated) return { entry: null, lapsed };
      entry.lease = { holder: deps.holder, token, until: new Date(at.getTime() + leaseMs()).toISOString() };
      return { entry, lapsed };
    });
    if (done === null) return null;
    await auditRecoveredCalls(deps, done.run, message.step_key, done.result.lapsed);
    if (done.result.entry === null) {
      await settled(done.run);
      return 'escalated';
    }
    return { run: done.run, entry: done.result.entry, token };
  }

  /**
   * What the claim of `message` will find, read without writing: the step's agent when the step
   * is claimable now and the agent Running. Its rate-limit slot is then asked for in the same
   * turn as the claim, so that both share one commit (docs/workflows.md "How a run executes").
   * Null otherwise: the invocation's admission takes the slot as for any invocation.
   */
  async function ahead(message: WorkflowStepMessage, known: WorkflowRunRecord | undefined): Promise<AgentRecord | null> {
    const run = known ?? (await runs.get(message.run_id))?.doc;
    const entry = run === undefined ? null : claimable(run, message.step_key, now());
    if (run === undefined || entry === null) return null;
    const step = run.definition.steps[entry.index];
    const agent = step === undefined ? null : await stepAgent(deps.agents, step.agent);
    return agent?.state === 'Running' ? agent : null;
  }

  /** Extends the lease: its new end (epoch ms), or null when it is no longer ours (cancelled, ended, taken over). */
  async function renew(runId: string, key: string, token: string): Promise<number | null> {
    const until = now().getTime() + leaseMs();
    const done = await transitionRun(runs, runId, options(), (draft) => {
      const entry = draft.pending[key];
      if (TERMINAL_RUN_STATES.has(draft.state) || entry?.lease?.token !== token) return null;
      entry.lease.until = new Date(until).toISOString();
      return true;
    });
    return done === null ? null : until;
  }

  /**
   * Renews the lease every third of `lease_secs` while the step runs, and aborts the execution
   * when the lease is lost (the run was cancelled or ended, the step taken over) or about to lapse because
   * renewals keep failing (store unreachable): past its end another worker may take the step
   * over, so this one stops before then rather than run beside it. Its writes would be refused
   * anyway (the journal and the checkpoint are fenced by the lease token); stopping saves the
   * model and read-only tool calls of a doomed execution. Returns the stop function.
   */
  function keepLease(message: WorkflowStepMessage, claimed: Claimed, controller: AbortController): () => void {
    const every = Math.max(100, Math.floor(leaseMs() / 3));
    let leaseUntil = Date.parse(claimed.entry.lease?.until ?? '') || now().getTime() + leaseMs();
    const heartbeat = setInterval(() => {
      renew(message.run_id, message.step_key, claimed.token).then(
        (until) => {
          if (until === null) controller.abort(Errors.invocationCancelled("the step is no longer this worker's (the run was cancelled or ended)"));
          else leaseUntil = Math.max(leaseUntil, until);
        },
        (err: unknown) => {
          deps.warn({ err, run_id: message.run_id }, 'could not renew a workflow step lease');
          if (now().getTime() + every >= leaseUntil && !controller.signal.aborted) {
            controller.abort(Errors.invocationCancelled('the step lease could not be renewed before it lapsed (store unreachable); the sweeper dispatches the step again'));
          }
        },
      );
    }, every);
    heartbeat.unref();
    return () => clearInterval(heartbeat);
  }

  /**
   * Invokes the step's agent. `onSucceeded` is handed to the invocation as its `onAnswered`: the
   * checkpoint of a success is written in the same turn as the invocation's own writes (one
   * commit on the embedded store, and a worker killed around it leaves both or neither).
   */
  async function execute(claimed: Claimed, signal: AbortSignal, onSucceeded: (outcome: StepOutcome) => Promise<unknown>, known: Ahead): Promise<StepOutcome> {
    const { run, entry } = claimed;
    const step = run.definition.steps[entry.index]!;
    const agent = known.agent ?? (await stepAgent(deps.agents, step.agent));
    if (agent === null) return { kind: 'failed', error: Errors.notFound('agent', agentLabel(step.agent)).message };
    const succeeded = (result: { content: string; tokens_used: number; duration_ms: number }): StepOutcome => ({
      kind: 'succeeded',
      result: {
        step_name: step.name,
        agent_id: agent.id,
        agent_name: agent.name,
        output: result.content,
        tokens_used: result.tokens_used,
        duration_ms: result.duration_ms,
      },
    });
    try {
      const { result } = await deps.invocation.execute(
        {
          agent_id: agent.id,
          source: { Workflow: { run_id: run.id, workflow_id: run.workflow_id, step: step.name } },
          message: renderPrompt(step.prompt_template, entry.input, run.progress.variables),
          correlation_id: run.id,
          caller: WORKFLOW_CALLER,
        },
        {
          timeoutSecs: step.timeout_secs,
          stateless: true,
          signal,
          toolJournal: createStepJournal(runs, { runId: run.id, key: entry.key, token: claimed.token }, journalOf(entry), { ...options(), changed: () => deps.runBus.changed(run.id) }),
          onAnswered: (answer) => onSucceeded(succeeded(answer)),
          ...(known.rateLimitTaken === undefined ? {} : { rateLimitTaken: known.rateLimitTaken }),
        },
      );
      return succeeded(result);
    } catch (error) {
      if (isInDoubt(error)) return { kind: 'escalated', error: error.message, calls: (error.details?.['calls'] ?? []) as JournaledToolCall[] };
      if (error instanceof PlatformError && error.category === 'RateLimited') {
        const until = new Date(now().getTime() + (error.retryAfterSecs ?? 1) * 1000).toISOString();
        return { kind: 'deferred', until, error: error.message };
      }
      return { kind: 'failed', error: error instanceof Error ? error.message : String(error) };
    }
  }

  /** Records the outcome if the claim still holds: null when it no longer does (nothing written). */
  function record(claimed: Claimed, outcome: StepOutcome, collectAgent: CollectAgent): Promise<Recorded | null> {
    const { entry, token } = claimed;
    return transitionRun(runs, claimed.run.id, options(), (draft) => {
      if (TERMINAL_RUN_STATES.has(draft.state) || draft.pending[entry.key]?.lease?.token !== token) return null;
      const othersInFlight = Object.values(draft.pending).some((e) => e.key !== entry.key && e.lease !== null);
      const planned = applyOutcome(draft, entry.key, outcome, {
        now: now(),
        retryDelayMs: (n) => Math.min(deps.settings().retry_backoff_ms * 2 ** (n - 1), deps.settings().retry_max_backoff_ms),
        collectAgent,
      });
      return { planned, othersInFlight };
    });
  }

  /** After the outcome was recorded: its event, the steps it dispatched, the run's end; the step to run here next, if one. */
  async function proceed(claimed: Claimed, outcome: StepOutcome, done: Recorded): Promise<StepContinuation | null> {
    const { entry } = claimed;
    const { run, result } = done;
    if (outcome.kind === 'succeeded') {
      await deps.events?.emit('workflow.step.completed', {
        id: `workflow.step.completed:${run.id}:${entry.key}`,
        agent_id: outcome.result.agent_id,
        data: { run_id: run.id, workflow_id: run.workflow_id, workflow_name: run.workflow_name, step_id: outcome.result.step_name, status: 'Completed' },
      });
    }
    // A lone next step runs here, unpublished: if this process dies first, the entry is a dispatched
    // one no worker took, published again by a sweeper (run-sweeper.ts), as after any lost publish.
    const [only, ...others] = result.planned.dispatch;
    const next = run.state === 'Running' && only !== undefined && others.length === 0 ? only : null;
    await deps.runBus.dispatch(run.id, next === null ? result.planned.dispatch : []);
    const waiting = Object.values(run.pending).filter((e) => e.dispatched_at === null && e.lease === null);
    if (run.state === 'Running' && waiting.length > 0) deps.wake?.(run.id, waiting.map((e) => e.due_at).sort()[0]!);
    // A FanOut member that failed the run stops its siblings (their work can no longer count).
    if (run.state === 'Failed' && result.othersInFlight) deps.runBus.cancel(run.id, run.error ?? 'the run failed');
    await settled(run);
    return next === null ? null : { message: { run_id: run.id, step_key: next.key, dispatch: next.dispatch }, entry: next, run };
  }

  async function settled(run: WorkflowRunRecord): Promise<void> {
    deps.runBus.changed(run.id);
    await finalizeRun(deps, run);
  }

  function track(runId: string, controller: AbortController): () => void {
    let set = running.get(runId);
    if (set === undefined) running.set(runId, (set = new Set()));
    set.add(controller);
    return () => {
      set.delete(controller);
      if (set.size === 0) running.delete(runId);
    };
  }

  return {
    async handle(message, known) {
      const agent = await ahead(message, known);
      const claiming = claim(message);
      // Same turn as the claim's write. Awaited by the invocation's admission, or dropped (a
      // claim that finds the step taken meanwhile spends a slot for nothing: a rare race).
      const rateLimitTaken = agent === null ? undefined : deps.invocation.takeRateLimit(agent.id);
      rateLimitTaken?.catch(() => undefined);
      const claimed = await claiming;
      if (claimed === null || claimed === 'escalated') return null;
      const controller = new AbortController();
      const untrack = track(message.run_id, controller);
      const stopRenewing = keepLease(message, claimed, controller);
      const started = now().getTime();
      try {
        // Read before the step runs (a Collect step's agent), so that a success's checkpoint
        // needs no read between the answer and its write.
        const collectAgent = await collectAgentOf(deps.agents, claimed.run);
        // Set when the invocation answered: its checkpoint, written with the answer's own writes.
        const early: { outcome?: StepOutcome; done?: Promise<Recorded | null> } = {};
        const onSucceeded = (succeeded: StepOutcome): Promise<Recorded | null> => {
          early.outcome = succeeded;
          early.done = record(claimed, succeeded, collectAgent);
          return early.done;
        };
        const executed = await execute(claimed, controller.signal, onSucceeded, { agent, rateLimitTaken });
        // A success recorded with the answer stands even if the invocation failed after it.
        const outcome = early.outcome ?? executed;
        const step = claimed.run.definition.steps[claimed.entry.index];
        const mode = step === undefined ? 'unknown' : typeof step.mode === 'string' ? step.mode : (Object.keys(step.mode)[0] ?? 'unknown');
        const seconds = Math.max(0, now().getTime() - started) / 1000;
        const aborted = controller.signal.aborted && early.done === undefined;
        deps.onStepExecuted?.({ mode, outcome: aborted ? 'aborted' : outcome.kind, seconds });
        // Aborted before an answer: the run was cancelled or the lease is lost; whoever ended it
        // wrote the outcome. (A record is fenced by the lease token: then it writes nothing.)
        if (aborted) return null;
        const done = await (early.done ?? record(claimed, outcome, collectAgent));
        return done === null ? null : await proceed(claimed, outcome, done);
      } finally {
        stopRenewing();
        untrack();
      }
    },

    handOff: (continuation) => deps.runBus.dispatch(continuation.message.run_id, [continuation.entry]),

    cancelRun(runId, reason) {
      const controllers = running.get(runId);
      if (controllers === undefined) return 0;
      for (const controller of controllers) controller.abort(Errors.invocationCancelled(reason));
      return controllers.size;
    },
  };
}
