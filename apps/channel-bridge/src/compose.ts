import type { LoadedConfig } from '@agent-platform/config';
import { createEventPublisher } from '@agent-platform/domain';
import { openProcess, type ComposeContext, type ComposeOptions, type ComposedProcess } from '@agent-platform/engines';
import { createChannelBridgeService } from './service.ts';

/**
 * The channel bridge running alone: connects its engines from `[runtime]` and runs the service.
 * There are no channels yet (they arrive with their own issue), so it holds its connections and
 * drains on SIGTERM, and a fleet can already run it in its place.
 */
export async function composeChannelBridge(loaded: LoadedConfig, context: ComposeContext, options: ComposeOptions = {}): Promise<ComposedProcess> {
  const { clock, logger, engines } = await openProcess(loaded.config, context, options);
  const events = createEventPublisher({ bus: engines.bus, clock, warn: (ctx, message) => logger.warn(ctx, message) });
  return { logger, services: [createChannelBridgeService({ logger, events })], close: () => engines.close() };
}
