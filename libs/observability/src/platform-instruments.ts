import type { PlatformMetrics } from './metrics.ts';

/**
 * The platform's own metrics, in one catalogue (docs/observability.md "Metrics"): names, units
 * and labels are decided here, the processes only report what happened. Each metric lives in the
 * process where the work runs (an invocation on the agent worker, a fire on the scheduler), so a
 * fleet is scraped process by process.
 *
 * Labels are bounded on purpose: no agent, run, schedule, webhook or channel id, no caller; only
 * closed sets (sources, outcomes, error categories, step modes, channel kinds, event kinds) and
 * ids from the config file (provider ids). An invocation source outside the known set counts as
 * `other`, so a caller cannot grow the label set.
 */
export interface PlatformInstruments {
  /** `invocations_total{source,outcome}`, `invocation_duration_seconds{source,result}`, `invocation_tokens_total{source}`. */
  invocation(sample: { source: string; outcome: string; seconds: number; tokens: number }): void;
  /** `model_calls_total{provider,outcome}`, `model_call_duration_seconds{provider}`, `model_tokens_total{provider,type}`. */
  modelCall(sample: {
    provider: string;
    outcome: string;
    seconds: number;
    inputTokens: number;
    outputTokens: number;
  }): void;
  /** `tool_calls_total{outcome}`: tool calls by `success` or `failure`. */
  toolCall(outcome: 'success' | 'failure'): void;
  /** `workflow_steps_total{mode,outcome}` and `workflow_step_duration_seconds{mode}`. */
  workflowStep(sample: { mode: string; outcome: string; seconds: number }): void;
  /** `webhook_deliveries_total{outcome}`: delivered, retrying, dead_lettered, gone. */
  webhookDelivery(outcome: WebhookDeliveryOutcome): void;
  /** `channel_messages_total{direction,kind}`: `out` counted by the bridge that sent it. */
  channelMessageSent(kind: string, outcome: 'sent' | 'failed'): void;
  /**
   * One platform event emitted by this process: `platform_events_total{kind}`, and the metrics
   * the catalogue derives from events (runs started and finished, inbound channel messages,
   * licence budget crossings, audit verification failures).
   */
  event(kind: string, data: unknown): void;
}

export type WebhookDeliveryOutcome = 'delivered' | 'retrying' | 'dead_lettered' | 'gone';

/** The invocation sources of the spec and the platform; anything else is `other`. */
export const INVOCATION_SOURCES = new Set(['Api', 'Chat', 'Workflow', 'Cron', 'Channel', 'Trigger']);

/** Seconds: a cached answer (milliseconds) up to a long tool loop (the 600 s invocation ceiling). */
const DURATION_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

const cache = new WeakMap<PlatformMetrics, PlatformInstruments>();

/** The instruments over a registry; one set per registry (the all-in-one's services share it). */
export function platformInstruments(metrics: PlatformMetrics): PlatformInstruments {
  const known = cache.get(metrics);
  if (known !== undefined) return known;
  const made = build(metrics);
  cache.set(metrics, made);
  return made;
}

/** Instruments that count nothing: for services composed without a registry (unit tests). */
export const NO_INSTRUMENTS: PlatformInstruments = {
  invocation: () => undefined,
  modelCall: () => undefined,
  toolCall: () => undefined,
  workflowStep: () => undefined,
  webhookDelivery: () => undefined,
  channelMessageSent: () => undefined,
  event: () => undefined,
};

function build(metrics: PlatformMetrics): PlatformInstruments {
  const invocations = metrics.counter(
    'invocations_total',
    'Invocations run by this process, by source and outcome (completed, duplicate, or the error category).',
    ['source', 'outcome'],
  );
  const invocationSeconds = metrics.histogram(
    'invocation_duration_seconds',
    'Seconds an invocation took, by source and result (success, failure).',
    ['source', 'result'],
    DURATION_BUCKETS,
  );
  const invocationTokens = metrics.counter(
    'invocation_tokens_total',
    'Model tokens (input and output) spent by invocations, by source.',
    ['source'],
  );
  const modelCalls = metrics.counter(
    'model_calls_total',
    'Model provider calls, by provider and outcome (success, or the error category).',
    ['provider', 'outcome'],
  );
  const modelSeconds = metrics.histogram(
    'model_call_duration_seconds',
    'Seconds a model provider call took, retries included.',
    ['provider'],
    DURATION_BUCKETS,
  );
  const modelTokens = metrics.counter(
    'model_tokens_total',
    'Tokens a model provider reported, by provider and type (input, output).',
    ['provider', 'type'],
  );
  const toolCalls = metrics.counter(
    'tool_calls_total',
    'Tool calls the models made, by outcome (success, failure).',
    ['outcome'],
  );
  const steps = metrics.counter(
    'workflow_steps_total',
    'Workflow step executions, by step mode and outcome (succeeded, failed, deferred, aborted).',
    ['mode', 'outcome'],
  );
  const stepSeconds = metrics.histogram(
    'workflow_step_duration_seconds',
    'Seconds a workflow step execution took, by step mode.',
    ['mode'],
    DURATION_BUCKETS,
  );
  const runsStarted = metrics.counter('workflow_runs_started_total', 'Workflow runs created.');
  const runsFinished = metrics.counter(
    'workflow_runs_finished_total',
    'Workflow runs that ended, by final status (Completed, Escalated, Failed, Cancelled).',
    ['status'],
  );
  const deliveries = metrics.counter(
    'webhook_deliveries_total',
    'Outbound webhook delivery attempts, by outcome (delivered, retrying, dead_lettered, gone).',
    ['outcome'],
  );
  const channelMessages = metrics.counter(
    'channel_messages_total',
    'Channel messages, by direction (in, out), channel kind and outcome.',
    ['direction', 'kind', 'outcome'],
  );
  const events = metrics.counter(
    'platform_events_total',
    'Platform events emitted by this process, by kind.',
    ['kind'],
  );
  const budgetCrossings = metrics.counter(
    'licence_budget_crossings_total',
    'Licence budgets that reached 80 % (warning) or 100 % (exhausted) in their period.',
    ['level'],
  );
  const auditFailures = metrics.counter(
    'audit_verification_failures_total',
    'Audit chain verifications that found the chain broken or not matching its checkpoint.',
  );

  return {
    invocation({ source, outcome, seconds, tokens }) {
      const bounded = INVOCATION_SOURCES.has(source) ? source : 'other';
      invocations.inc({ source: bounded, outcome });
      invocationSeconds.observe(
        {
          source: bounded,
          result: outcome === 'completed' || outcome === 'duplicate' ? 'success' : 'failure',
        },
        seconds,
      );
      if (tokens > 0) invocationTokens.inc({ source: bounded }, tokens);
    },
    modelCall({ provider, outcome, seconds, inputTokens, outputTokens }) {
      modelCalls.inc({ provider, outcome });
      modelSeconds.observe({ provider }, seconds);
      if (inputTokens > 0) modelTokens.inc({ provider, type: 'input' }, inputTokens);
      if (outputTokens > 0) modelTokens.inc({ provider, type: 'output' }, outputTokens);
    },
    toolCall: (outcome) => toolCalls.inc({ outcome }),
    workflowStep({ mode, outcome, seconds }) {
      steps.inc({ mode, outcome });
      stepSeconds.observe({ mode }, seconds);
    },
    webhookDelivery: (outcome) => deliveries.inc({ outcome }),
    channelMessageSent: (kind, outcome) => channelMessages.inc({ direction: 'out', kind, outcome }),
    event(kind, data) {
      events.inc({ kind });
      const fields = (typeof data === 'object' && data !== null ? data : {}) as Record<string, unknown>;
      if (kind === 'workflow.run.started') runsStarted.inc();
      else if (kind.startsWith('workflow.run.'))
        runsFinished.inc({ status: typeof fields.status === 'string' ? fields.status : 'unknown' });
      else if (kind === 'channel.message.received')
        channelMessages.inc({
          direction: 'in',
          kind: typeof fields.kind === 'string' ? fields.kind : 'unknown',
          outcome: 'received',
        });
      else if (kind === 'licence.budget.warning') budgetCrossings.inc({ level: 'warning' });
      else if (kind === 'licence.budget.exhausted') budgetCrossings.inc({ level: 'exhausted' });
      else if (kind === 'audit.verification.failed') auditFailures.inc();
    },
  };
}
