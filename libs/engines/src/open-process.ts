import type { PlatformConfig } from '@agent-platform/contracts';
import { systemClock, type Clock } from '@agent-platform/domain';
import { createLogger, type Logger } from '@agent-platform/observability';
import { openEngines, type Engines } from './open-engines.ts';
import type { ComposeContext } from './run-service.ts';

/** What a composition root of an app running alone may override (tests do). */
export interface ComposeOptions {
  /** Where log lines go; default stdout. */
  logDestination?: NodeJS.WritableStream | 'stdout' | 'silent';
  clock?: Clock;
}

/**
 * The start every app's `compose.ts` shares: the clock, the logger from `[logging]` and the
 * engines from `[runtime]`. The app then builds its services over them.
 */
export async function openProcess(
  config: PlatformConfig,
  context: ComposeContext,
  options: ComposeOptions = {},
): Promise<{ clock: Clock; logger: Logger; engines: Engines }> {
  const clock = options.clock ?? systemClock;
  const { logger } = createLogger({
    level: config.logging.level,
    bufferLines: config.logging.buffer_lines,
    destination: options.logDestination ?? 'stdout',
  });
  const engines = await openEngines(config, {
    clock,
    logger,
    dataDir: config.storage.data_dir,
    processName: context.name,
    env: context.env,
  });
  return { clock, logger, engines };
}
