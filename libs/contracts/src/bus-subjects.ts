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
  /**
   * Notifications: workers' progress on the invocations one requester sent (`agents.progress.<id>`,
   * one subject per api node or scheduler process, named in each request's `progress_subject`).
   */
  agentProgress: (requesterId: string) => `agents.progress.${requesterId}`,
  /** Notification: abort the in-flight steps of one workflow run (cancel), by `run_id`. */
  workflowCancel: 'workflows.cancel',
  /** Notifications: the run document of one run changed (`workflows.runs.<run id>`); listeners re-read it. */
  workflowRunChanged: (runId: string) => `workflows.runs.${runId}`,
  /**
   * Notification: the desired state of one integration changed (connect, disconnect, reconnect,
   * delete); every integration host reconciles it (docs/integrations.md "Fleet").
   */
  integrationChanged: 'integrations.changed',
  /** Notification: a host wrote its status row for one integration; a waiting connect looks again. */
  integrationReported: 'integrations.reported',
  /**
   * Notification: a channel record changed (create, PUT, enable, disable, delete); the bridge that
   * holds it restarts or stops its adapter, the others look for work (docs/channels.md "Fleet").
   */
  channelChanged: 'channels.changed',
  /**
   * Request/reply: send one ChannelOutbound through channel `<id>`, served only by the bridge
   * holding that channel's lease; no responder means no bridge holds it right now (retry later).
   */
  channelSend: (channelId: string) => `channels.send.${channelId}`,
  /**
   * Notification: the registry's signed revocation feed (a RevocationFeed JWS), pushed after each
   * security yank to platforms that share the registry's bus; others poll GET /revocations
   * (docs/registry.md "Revocation feed"). A missed push is caught by the next poll.
   */
  registryRevocations: 'registry.revocations',
} as const;

/** Durable streams (at-least-once, de-duplicated by envelope id): one row each in docs/architecture.md. */
export const Streams = {
  /** One message per dispatched workflow step (WorkflowStepMessage). */
  workflowSteps: 'workflow.steps',
  /** One message per platform event (PlatformEvent; envelope id = event id): triggers and webhooks. */
  platformEvents: 'platform.events',
  /** One message per inbound channel message (ChannelInbound; envelope id = `<channel>:<peer id>`). */
  channelInbound: 'channel.inbound',
  /** One message per reply to send through a channel (ChannelOutbound). */
  channelOutbound: 'channel.outbound',
} as const;

/** Durable consumer names: consumers sharing one split its messages across processes. */
export const Durables = {
  /** The agent workers that execute workflow steps. */
  workflowWorkers: 'workflow-workers',
  /** The trigger matcher (agent workers): each event is matched against the triggers once. */
  triggerMatchers: 'trigger-matchers',
  /** The webhook fan-out (agent workers): each event becomes one delivery job per webhook of its agent. */
  webhookFanOut: 'webhook-fan-out',
  /** The agent workers that answer inbound channel messages. */
  channelWorkers: 'channel-workers',
  /** The channel bridges that pass replies to the bridge holding the channel. */
  channelSenders: 'channel-senders',
} as const;

export const QueueGroups = {
  agentWorkers: 'agent-workers',
} as const;
