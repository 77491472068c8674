import { channelRunReplies, createChannelRouterService, type ChannelRouterDeps } from '@agent-platform/channels';
import { createRunBus, createTranscriptStore, createWorkflowService, type InvocationService } from '@agent-platform/domain';
import type { InvocationSources } from './compose.ts';

/**
 * The channel router of a worker (docs/channels.md "Routing"): inbound channel messages answered
 * by the channel's `default_agent` through this worker's invocation service, or handed to a run
 * of its `default_workflow` (a workflow service over the same sources starts it). Each new
 * message emits `channel.message.received` (docs/events.md), its id keyed by channel and peer id.
 */
export function composeChannelRouter(sources: InvocationSources, invocation: InvocationService): ReturnType<typeof createChannelRouterService> {
  const log = sources.logger.child({ service: 'channel-router' });
  const warn = (context: Record<string, unknown>, message: string): void => log.warn(context, message);
  const workflows = createWorkflowService({
    store: sources.store,
    clock: sources.clock,
    agents: sources.agents,
    licence: sources.licence.gate,
    models: sources.models,
    runBus: createRunBus(sources.bus, sources.clock, warn),
    settings: () => sources.config.current().workflows,
    warn,
    events: sources.events,
    onRunEnded: channelRunReplies(sources.bus, sources.clock),
  });
  const onReceived: ChannelRouterDeps['onReceived'] = (inbound, agentId) =>
    sources.events.emit('channel.message.received', {
      id: `channel.message.received:${inbound.channel_id}:${inbound.peer_message_id}`,
      agent_id: agentId,
      data: {
        channel_id: inbound.channel_id,
        kind: inbound.kind,
        conversation: inbound.conversation,
        thread: inbound.thread,
        sender: inbound.sender,
        peer_message_id: inbound.peer_message_id,
        text: inbound.text.slice(0, 4000),
      },
    });
  return createChannelRouterService({
    store: sources.store,
    bus: sources.bus,
    clock: sources.clock,
    logger: sources.logger,
    invocation,
    startRun: (workflowId, request, caller) => workflows.start(workflowId, request, caller),
    transcripts: createTranscriptStore(sources.store, sources.clock, sources.faults),
    ackWaitMs: sources.config.current().channels.inbound_redelivery_secs * 1000,
    onReceived,
  });
}
