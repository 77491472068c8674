/**
 * The bus catalogue: every subject and stream the platform uses, in one place, so that the
 * embedded and NATS adapters, the api and the workers agree (docs/architecture.md, issue 4).
 */
export const Subjects = {
  /** Request/reply, queue group `agent-workers`: run one agent invocation (send, invoke, cron). */
  agentInvoke: 'agents.invoke',
  /** Notification: abort in-flight work of one agent on whichever worker holds it (suspend). */
  agentAbort: 'agents.abort',
  /** Notification: cancel one invocation, by `invocation_id`, on whichever worker runs it. */
  agentCancel: 'agents.cancel',
  /** Notification: an idempotency key was settled (done or released); its waiters look again. */
  idempotencySettled: 'agents.idempotency.settled',
  /**
   * Notifications: the streamed reply text of one invocation, on a subject unique to the request
   * (`agents.stream.<uuid>`, named in the request's `stream_subject`).
   */
  agentStream: (requestId: string) => `agents.stream.${requestId}`,
} as const;

export const QueueGroups = {
  agentWorkers: 'agent-workers',
} as const;
