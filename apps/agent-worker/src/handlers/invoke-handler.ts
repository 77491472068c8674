import {
  INVOKE_HEARTBEAT_MS,
  INVOKE_WORKER_LOST_AFTER_MS,
  isAgentInvokeRequest,
  type AgentInvokeProgress,
  type AgentInvokeProgressAck,
  type AgentInvokeReply,
  type AgentStreamToken,
  type InvocationOutcome,
} from '@agent-platform/contracts';
import type { Bus } from '@agent-platform/bus';
import { Errors, invocationAbandoned, PlatformError, type AuditTrail, type InvocationOptions, type InvocationService } from '@agent-platform/domain';
import type { Logger } from '@agent-platform/observability';
import type { InvocationSlots } from '../invocation-slots.ts';

export interface InvokeHandlerDeps {
  bus: Bus;
  invocation: InvocationService;
  logger: Logger;
  /** This worker's invocation slots (`[agents] worker_concurrency`). */
  slots: InvocationSlots;
  /** Where a request's `audit_entry` is appended, with the answer's own writes. */
  audit: Pick<AuditTrail, 'record'>;
}

/**
 * `agents.invoke`: runs one invocation and replies `{result, duplicate}`. A thrown PlatformError
 * reaches the caller as a `BusError('remote')` carrying its category, message and details, which
 * the api turns back into the same error. With `stream_subject`, each piece of reply text is
 * notified there as it arrives; the notifications are sent before the reply, in order.
 *
 * The invocation takes one of this worker's slots once its idempotency key is claimed (a repeat
 * waiting for the key's owner holds none); when every slot is taken it waits in arrival order,
 * within the invocation timeout counted from its arrival. Its reply must fit the bus: a result
 * too large is refused before the licence is charged or the key remembered (bus.ts "Size").
 *
 * With `audit_entry` (the requesting HTTP request's own entry, as it reads on success), a fresh
 * answer appends it in the same turn as the answer's bookkeeping, so the embedded store commits
 * both at once and the api node writes nothing; the reply says `audited`. A duplicate, an error,
 * or an append that failed leaves the entry to the api (docs/audit.md "Who writes an entry").
 */
export function invokeHandler(deps: InvokeHandlerDeps) {
  return async (payload: unknown): Promise<AgentInvokeReply> => {
    if (!isAgentInvokeRequest(payload)) throw Errors.validation('agents.invoke: the request does not match AgentInvokeRequest');
    const { stream_subject: streamSubject, timeout_ms: timeoutMs, progress_subject: progressSubject, progress_ack: progressAck, audit_entry: auditEntry, ...request } = payload;
    const invocationId = request.invocation_id;
    let audited = false;
    // A requester that answers heartbeats (`progress_ack`): the worker charges and answers only
    // while it still waits. An older requester gets notifications, as before; none without a subject.
    const watched = progressSubject !== undefined && invocationId !== undefined;
    const gate = watched && progressAck === true ? requesterGate(deps, progressSubject, invocationId) : null;
    const stopNotifying = watched && gate === null ? heartbeat(deps, progressSubject, invocationId) : () => undefined;
    const options: InvocationOptions = {
      acquireSlot: (signal) => deps.slots.acquire(signal),
      checkDeliverable: (result) => assertDeliverable(deps.bus, result),
      ...(timeoutMs === undefined ? {} : { timeoutSecs: timeoutMs / 1000 }),
      ...(gate === null ? {} : { signal: gate.abandoned, beforeCommit: () => gate.confirm(), abandonable: true }),
      ...(auditEntry === undefined ? {} : { onAnswered: () => deps.audit.record(auditEntry).then(() => void (audited = true)) }),
    };
    if (streamSubject !== undefined) {
      options.onToken = (token: string): void => {
        deps.bus.notify<AgentStreamToken>(streamSubject, { token }).catch((err: unknown) => {
          deps.logger.warn({ err, subject: streamSubject }, 'could not forward a streamed token');
        });
      };
    }
    try {
      const reply = await deps.invocation.execute(request, options);
      // A fresh answer was confirmed right before its charge; a duplicate (nothing charged) is
      // confirmed here, so a request delivered after its requester gave up is not answered either.
      if (reply.duplicate) await gate?.confirm();
      return audited ? { ...reply, audited } : reply;
    } catch (error) {
      // Whatever stopped it (the gate, the cancel the requester sent, a lost idempotency claim):
      // say so when the requester no longer waits. Errors only, never the answer's path.
      if (gate !== null && !gate.isAbandoned()) await gate.confirm().catch(() => undefined);
      if (gate?.isAbandoned() === true) {
        deps.logger.warn(
          { invocation_id: invocationId, agent_id: request.agent_id, reason: gate.whyAbandoned() },
          'invocation abandoned by its requester: stopped, nothing charged, its answer not delivered',
        );
      } else if (!(error instanceof PlatformError)) {
        // The requester only gets "internal error in a bus handler" (bus.ts): the cause is here.
        deps.logger.error(
          { err: error, invocation_id: invocationId, correlation_id: request.correlation_id, agent_id: request.agent_id },
          'an invocation failed with an internal error',
        );
      }
      throw error;
    } finally {
      gate?.stop();
      stopNotifying();
    }
  };
}

/**
 * Tells the requester this worker took the invocation, then that it is alive every second until
 * the answer goes out: a requester that hears nothing for a few seconds knows the worker is gone
 * (docs/invocation.md "A worker that dies"). Best effort: a lost heartbeat is only a late one.
 * The previous protocol (notifications), for a requester that does not answer heartbeats.
 */
function heartbeat(deps: InvokeHandlerDeps, subject: string, invocationId: string): () => void {
  const say = (kind: AgentInvokeProgress['kind']): void => {
    deps.bus.notify<AgentInvokeProgress>(subject, { invocation_id: invocationId, kind }).catch((err: unknown) => {
      deps.logger.warn({ err, subject }, 'could not send an invocation heartbeat');
    });
  };
  say('accepted');
  const timer = setInterval(() => say('alive'), INVOKE_HEARTBEAT_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Margin under the requester's silence limit: a worker whose last acknowledged heartbeat left
 * longer than INVOKE_WORKER_LOST_AFTER_MS - ACK_MARGIN_MS ago may no longer charge or answer. It
 * leaves the commit and the reply one second to reach the requester before it could give up.
 */
export const ACK_MARGIN_MS = 1_000;
export const ACK_WINDOW_MS = INVOKE_WORKER_LOST_AFTER_MS - ACK_MARGIN_MS;

/** The worker's view of whether its requester still waits (heartbeats sent as requests). */
export interface RequesterGate {
  /** Aborts when the requester answered "not waiting" or stopped answering for the whole window. */
  readonly abandoned: AbortSignal;
  /**
   * Resolves when a heartbeat sent less than ACK_WINDOW_MS ago was acknowledged "still waiting"
   * (waiting, within the window, for the one in flight); else aborts the invocation and rejects.
   */
  confirm(): Promise<void>;
  isAbandoned(): boolean;
  whyAbandoned(): string | undefined;
  stop(): void;
}

/**
 * Heartbeats as requests on `subject` (`accepted` at once, in parallel with the work, then `alive`
 * every INVOKE_HEARTBEAT_MS): the requester answers whether it still waits. The requester gives up
 * on an invocation only after INVOKE_WORKER_LOST_AFTER_MS without a heartbeat, counted from when it
 * received the last one, which left the worker no earlier than it was sent: so while the last
 * heartbeat acknowledged "still waiting" was sent less than that ago (less the margin), the
 * requester still waits, and the charge and the answer may go out. Times are monotonic.
 */
export function requesterGate(deps: Pick<InvokeHandlerDeps, 'bus' | 'logger'>, subject: string, invocationId: string, now: () => number = () => performance.now()): RequesterGate {
  const controller = new AbortController();
  let lastAckedSentAt = Number.NEGATIVE_INFINITY;
  let inFlight: { sentAt: number; answered: Promise<void> } | null = null;
  let stopped = false;
  let why: string | undefined;

  const abandon = (reason: string): void => {
    if (controller.signal.aborted) return;
    why = reason;
    controller.abort(invocationAbandoned(invocationId, reason));
  };

  const send = (kind: AgentInvokeProgress['kind']): { sentAt: number; answered: Promise<void> } => {
    const sentAt = now();
    const answered = deps.bus
      .request<AgentInvokeProgress, AgentInvokeProgressAck>(subject, { invocation_id: invocationId, kind }, { timeoutMs: ACK_WINDOW_MS })
      .then(
        (ack) => {
          if (ack.waiting === true) lastAckedSentAt = Math.max(lastAckedSentAt, sentAt);
          else abandon('its requester answered that it no longer waits for it');
        },
        (err: unknown) => {
          if (!stopped) deps.logger.warn({ err, subject, invocation_id: invocationId }, 'an invocation heartbeat was not acknowledged');
        },
      )
      .finally(() => {
        if (inFlight?.sentAt === sentAt) inFlight = null;
      });
    const sent = { sentAt, answered };
    inFlight = sent;
    return sent;
  };

  send('accepted');
  const timer = setInterval(() => send('alive'), INVOKE_HEARTBEAT_MS);
  timer.unref();

  const fresh = (): boolean => now() - lastAckedSentAt < ACK_WINDOW_MS;

  return {
    abandoned: controller.signal,
    async confirm() {
      if (controller.signal.aborted) throw controller.signal.reason;
      if (fresh()) return;
      // Not yet (the first heartbeat still on its way) or too old: wait for the latest one in
      // flight, or send one, as long as an acknowledgement of it could still count.
      const pending = inFlight !== null && now() - inFlight.sentAt < ACK_WINDOW_MS ? inFlight : send('alive');
      const left = ACK_WINDOW_MS - (now() - pending.sentAt);
      let timeout: NodeJS.Timeout | undefined;
      await Promise.race([pending.answered, new Promise((resolve) => (timeout = setTimeout(resolve, Math.max(0, left))))]);
      clearTimeout(timeout);
      if (controller.signal.aborted) throw controller.signal.reason;
      if (fresh()) return;
      abandon(`no heartbeat was acknowledged by its requester within ${ACK_WINDOW_MS} ms`);
      throw controller.signal.reason;
    },
    isAbandoned: () => controller.signal.aborted,
    whyAbandoned: () => why,
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}

/** The reply `{result, duplicate}` as the bus will encode it must fit its maximum payload. */
function assertDeliverable(bus: Bus, result: InvocationOutcome): void {
  const reply: AgentInvokeReply = { result, duplicate: false };
  const bytes = Buffer.byteLength(JSON.stringify(reply));
  const max = bus.maxPayloadBytes();
  if (bytes > max) throw Errors.replyTooLarge(bytes, max);
}
