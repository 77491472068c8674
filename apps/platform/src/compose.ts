import { randomUUID } from 'node:crypto';
import type { ApiDeps, ProcessService } from '@agent-platform/api';
import { faultPointsFromEnv } from '@agent-platform/engines';
import {
  composeAgentTools,
  composeChannelRouter,
  composeIntegrationHost,
  composeInvocationService,
  composeTriggerMatching,
  composeWorkflowRunner,
  createAgentWorkerService,
  createWebhookDeliveryService,
} from '@agent-platform/agent-worker';
import { composeBridge, createChannelBridgeService } from '@agent-platform/channel-bridge';
import { platformInstruments } from '@agent-platform/observability';
import { composeRegistryService } from '@agent-platform/registry';
import { createSchedulerService, fireRetry, fireTimeoutMs, scheduleMetrics } from '@agent-platform/scheduler';

/**
 * The all-in-one composition (DECISIONS D1): the agent worker, scheduler and channel bridge run
 * in the api's process over the same engines (one embedded store, bus and queue), started in
 * this order before the api listener and stopped after it. The worker runs the invocations the
 * api requests over the bus, with the api's store, providers and licence gate; the scheduler
 * fires the schedules on the queue as invocations on the same bus. With `[surfaces] registry = true`
 * the package registry listens on `[registry] listen` here too, over the same engines.
 */
export function composePlatformServices(deps: ApiDeps, env: Record<string, string | undefined> = {}): ProcessService[] {
  // Tools run where agents run: here, the integration host of this process (started first, stopped last).
  const integrations = composeIntegrationHost({ ...deps, env }, 'platform');
  const sources = { ...deps, processId: randomUUID(), faults: faultPointsFromEnv(env) };
  const invocation = composeInvocationService(sources, composeAgentTools({ ...sources, integrations }));
  const services: ProcessService[] = [
    integrations,
    createAgentWorkerService({
      bus: deps.bus,
      invocation,
      audit: deps.audit,
      logger: deps.logger,
      settings: () => deps.config.current().agents,
      // The embedded bus keeps step messages in this process only: after a crash the first sweep
      // publishes again every step that was waiting (docs/workflows.md "Crash safety").
      workflows: composeWorkflowRunner(sources, invocation, { busForgetsOnRestart: deps.config.current().runtime.bus === 'embedded' }),
      // Platform events fire triggers here too (docs/events.md "Triggers").
      triggers: composeTriggerMatching(sources),
    }),
    createSchedulerService({
      queue: deps.queue,
      bus: deps.bus,
      logger: deps.logger,
      schedules: deps.schedules,
      requestTimeoutMs: fireTimeoutMs(() => deps.config.current()),
      retry: fireRetry(() => deps.config.current()),
      // The api's registry: GET /metrics shows the schedule metrics of the all-in-one.
      metrics: scheduleMetrics(deps.metrics),
      events: deps.events,
    }),
    // Channels (docs/channels.md): the router answers inbound messages, the bridge runs the adapters.
    composeChannelRouter(sources, invocation),
    createChannelBridgeService({ logger: deps.logger, bridge: composeBridge({ ...deps, openConfig: (record) => deps.channels.openConfig(record) }) }),
    // Outbound webhooks: the fan-out of platform events and the delivery jobs (docs/webhooks.md).
    createWebhookDeliveryService({ ...deps, secrets: deps.webhookSecrets, config: () => deps.config.current(), instruments: platformInstruments(deps.metrics) }),
  ];
  // The registry on its own listener (docs/registry.md "Running it"): a registry publish here
  // pushes its revocations on this process's bus, where this platform hears them.
  if (deps.config.current().surfaces.registry) {
    services.push(composeRegistryService({ engines: deps, logger: deps.logger, clock: deps.clock, version: deps.version, config: () => deps.config.current(), env, processName: 'platform' }));
  }
  return services;
}
