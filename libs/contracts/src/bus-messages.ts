import { Type, type Static } from 'typebox';
import { compiledCheck } from './compiled-check.ts';
import { InvocationResult, ToolCallView } from './http/invocation.ts';
import { AuditCategory } from './http/security.ts';

/**
 * Payloads of the bus subjects in bus-subjects.ts. One spelling per field across HTTP, bus and
 * store (STYLE §2): these reuse the HTTP shapes where they carry the same thing.
 */

/**
 * Where an invocation came from: `Api`, `Chat` (POST /chat/completions), `Workflow`, or an object
 * keyed by `Channel` or `Cron`. Its name (the string, or the object's key) is the `by_source` row.
 */
export const InvocationSourceWire = Type.Union([Type.String({ minLength: 1 }), Type.Record(Type.String(), Type.Unknown())]);
export type InvocationSourceWire = Static<typeof InvocationSourceWire>;

/** An HTTP request's audit entry for another process to append, as the api's audit hook would (AuditRecordInput). */
export const RequestAuditEntry = Type.Object({
  category: Type.Unsafe<AuditCategory>(AuditCategory),
  identity: Type.String({ minLength: 1 }),
  role: Type.String({ minLength: 1 }),
  action: Type.String({ minLength: 1 }),
  target: Type.String(),
  result: Type.String({ minLength: 1 }),
  metadata: Type.Record(Type.String(), Type.String()),
});
export type RequestAuditEntry = Static<typeof RequestAuditEntry>;

/** `agents.invoke` request: run one invocation of one agent. */
export const AgentInvokeRequest = Type.Object({
  agent_id: Type.String(),
  source: InvocationSourceWire,
  message: Type.String(),
  idempotency_key: Type.Optional(Type.String()),
  correlation_id: Type.String(),
  workflow_type: Type.Optional(Type.String()),
  /** Given: the worker forwards each streamed piece of text as an AgentStreamToken notification here. */
  stream_subject: Type.Optional(Type.String()),
  /**
   * Who asked (the caller's identity: an API key's name, `system:scheduler` for a cron fire):
   * idempotency keys are scoped by it as well as by agent. Absent from older senders: one shared
   * scope, `unscoped`.
   */
  caller: Type.Optional(Type.String({ minLength: 1 })),
  /** The caller's role (`admin`, `service`, ...): the privacy gateway's audit entries name it (absent: `system`). */
  caller_role: Type.Optional(Type.String({ minLength: 1 })),
  /** Unique per request (a UUID): an `agents.cancel` naming it stops the invocation wherever it runs. */
  invocation_id: Type.Optional(Type.String({ minLength: 1 })),
  /**
   * Given (with `invocation_id`): the worker announces on this subject that it took the invocation
   * and then that it is alive, every second, until it answers (AgentInvokeProgress), so the
   * requester notices a killed worker in seconds instead of at the invocation timeout.
   */
  progress_subject: Type.Optional(Type.String()),
  /**
   * Set (true) by a requester that answers heartbeats (AgentInvokeProgressAck): the worker then
   * sends them as requests, and neither charges nor answers once the requester stopped waiting
   * (docs/invocation.md "A worker that dies"). Absent (an older requester): notifications, as before.
   */
  progress_ack: Type.Optional(Type.Boolean()),
  /** The longest the invocation may run when shorter than `[agents] invocation_timeout_secs` (legacy POST /workflows/step). */
  timeout_ms: Type.Optional(Type.Integer({ minimum: 1 })),
  /**
   * The requesting HTTP request's own audit entry, as it will read if the request succeeds: the
   * worker appends it with the answer's bookkeeping (one commit) and says so in the reply
   * (`audited`), so the api node has nothing left to write (docs/audit.md "Who writes an entry").
   */
  audit_entry: Type.Optional(RequestAuditEntry),
});
export type AgentInvokeRequest = Static<typeof AgentInvokeRequest>;

/**
 * Consumers check what they take off the bus: another process (or version) may have sent it.
 * Every invocation goes through here, so the check is compiled once, on first use.
 */
export const isAgentInvokeRequest = compiledCheck(AgentInvokeRequest);

/**
 * The result of one invocation: InvocationResult plus the tools that ran (AgentResponse) and the
 * token split (the chat-completions `usage`).
 */
export const InvocationOutcome = Type.Intersect([
  InvocationResult,
  Type.Object({
    tool_calls: Type.Array(ToolCallView),
    usage: Type.Object({ input_tokens: Type.Integer({ minimum: 0 }), output_tokens: Type.Integer({ minimum: 0 }) }),
    /** True when the privacy gateway replaced personal data with tokens in this invocation's model request. */
    pii_tokenized: Type.Optional(Type.Boolean()),
  }),
]);
export type InvocationOutcome = Static<typeof InvocationOutcome>;

/**
 * `agents.invoke` reply. `duplicate`: the idempotency key was already processed and `result` is
 * the one recorded then (the api answers it as a DuplicateInvocation error body); a duplicate is
 * never `audited` (its request's entry is the api's to write).
 */
export const AgentInvokeReply = Type.Object({
  result: InvocationOutcome,
  duplicate: Type.Boolean(),
  /** True when the worker committed the request's `audit_entry` with the answer. */
  audited: Type.Optional(Type.Boolean()),
});
export type AgentInvokeReply = Static<typeof AgentInvokeReply>;

/**
 * On a request's `progress_subject`: the worker took the invocation, or still runs it. A request
 * (answered AgentInvokeProgressAck) when the invoke request had `progress_ack`, else a notification
 * (workers of the previous version always notify; the requester takes both as a heartbeat).
 */
export const AgentInvokeProgress = Type.Object({
  invocation_id: Type.String({ minLength: 1 }),
  kind: Type.Union([Type.Literal('accepted'), Type.Literal('alive')]),
});
export type AgentInvokeProgress = Static<typeof AgentInvokeProgress>;

/**
 * The requester's answer to a heartbeat sent as a request (with `progress_ack`): whether it still
 * waits for that invocation. `false`: it gave up on it (its worker was presumed lost and the
 * invocation sent again, or its client went away): the worker must neither charge nor answer.
 */
export const AgentInvokeProgressAck = Type.Object({ waiting: Type.Boolean() });
export type AgentInvokeProgressAck = Static<typeof AgentInvokeProgressAck>;

/** How often a worker says it is alive while it runs an invocation. */
export const INVOKE_HEARTBEAT_MS = 1_000;

/**
 * A worker that has said nothing for this long is presumed dead by its requester: three missed
 * heartbeats. A worker whose last acknowledged heartbeat was sent longer ago than this (less a
 * margin) may no longer charge or answer: its requester may have given up on it.
 */
export const INVOKE_WORKER_LOST_AFTER_MS = 3 * INVOKE_HEARTBEAT_MS;

/** Notification on a request's `stream_subject`: one piece of reply text, in order. */
export const AgentStreamToken = Type.Object({ token: Type.String() });
export type AgentStreamToken = Static<typeof AgentStreamToken>;

/**
 * `agents.cancel` notification: the requester of `invocation_id` went away (its HTTP client
 * disconnected, a workflow run was cancelled): the worker running it stops it, and the model
 * call is cancelled and not charged. A cancel that arrives before the invocation starts is
 * remembered for a while, so the invocation is refused when it does.
 */
export const AgentCancelMessage = Type.Object({
  invocation_id: Type.String({ minLength: 1 }),
  /** Why, for the log and the cancelled invocation's error. */
  reason: Type.Optional(Type.String()),
});
export type AgentCancelMessage = Static<typeof AgentCancelMessage>;

/**
 * `agents.idempotency.settled` notification: the owner of an idempotency key finished (`done`) or
 * gave it up (`released`); callers waiting on that key look again at once instead of polling.
 */
export const IdempotencySettledMessage = Type.Object({
  /** The record id (`<agent>:<scope>:<key>` hashed, see libs/domain idempotency.ts). */
  id: Type.String({ minLength: 1 }),
});
export type IdempotencySettledMessage = Static<typeof IdempotencySettledMessage>;

/** `agents.abort` notification: stop the agent's in-flight invocations on whichever worker runs them. */
export const AgentAbortMessage = Type.Object({
  agent_id: Type.String(),
  /** Why, e.g. `suspended` (the default when absent); shown in the aborted invocation's error. */
  reason: Type.Optional(Type.String()),
});
export type AgentAbortMessage = Static<typeof AgentAbortMessage>;
