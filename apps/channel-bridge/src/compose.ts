import type { LoadedConfig } from '@agent-platform/config';
import { systemClock, type Clock } from '@agent-platform/domain';
import { openEngines, type ComposeContext, type ComposedProcess } from '@agent-platform/engines';
import { createLogger } from '@agent-platform/observability';
import { createChannelBridgeService } from './service.ts';

export interface ComposeChannelBridgeOptions {
  logDestination?: NodeJS.WritableStream | 'stdout' | 'silent';
  clock?: Clock;
}

/**
 * The channel bridge running alone: connects its engines from `[runtime]` and runs the service.
 * There are no channels yet (they arrive with their own issue), so it holds its connections and
 * drains on SIGTERM, and a fleet can already run it in its place.
 */
export async function composeChannelBridge(
  loaded: LoadedConfig,
  context: ComposeContext,
  options: ComposeChannelBridgeOptions = {},
): Promise<ComposedProcess> {
  const boot = loaded.config;
  const clock = options.clock ?? systemClock;
  const { logger } = createLogger({ level: boot.logging.level, bufferLines: boot.logging.buffer_lines, destination: options.logDestination ?? 'stdout' });
  const engines = await openEngines(boot, { clock, logger, dataDir: boot.storage.data_dir, processName: context.name });
  return { logger, services: [createChannelBridgeService({ logger })], close: () => engines.close() };
}
