import type { LoadedConfig } from '@agent-platform/config';
import { openProcess, platformVersion, type ComposeContext, type ComposeOptions, type ComposedProcess } from '@agent-platform/engines';
import { createRegistryService } from './service.ts';

/**
 * The registry running alone: its engines from `[runtime]` (packages' metadata will live in the
 * store) and its listener on `[registry] listen`; the boot line ends with
 * `listening on <address>`.
 */
export async function composeRegistry(loaded: LoadedConfig, context: ComposeContext, options: ComposeOptions = {}): Promise<ComposedProcess> {
  const boot = loaded.config;
  const { clock, logger, engines } = await openProcess(boot, context, options);
  const registry = createRegistryService({ engines, logger, clock, version: platformVersion(), listen: boot.registry.listen });
  return {
    logger,
    services: [registry],
    close: () => engines.close(),
    bootDetail: () => `listening on ${registry.address}`,
  };
}
