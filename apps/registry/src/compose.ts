import { join } from 'node:path';
import { agreeWithFleetAtBoot, checkRegistryBootGate, ConfigError, signingKeyClaim, type LoadedConfig } from '@agent-platform/config';
import type { PlatformConfig } from '@agent-platform/contracts';
import type { Clock } from '@agent-platform/domain';
import {
  openProcess,
  platformVersion,
  type ComposeContext,
  type ComposeOptions,
  type ComposedProcess,
  type Engines,
} from '@agent-platform/engines';
import type { Logger } from '@agent-platform/observability';
import {
  createPackageRegistry,
  loadOrCreateSigningKey,
  migrateLegacyIdentities,
  openArchiveStore,
  type ArchiveStore,
} from '@agent-platform/registry-core';
import type { RegistryAppDeps } from './registry-app.ts';
import { createRegistryService, type RegistryService } from './service.ts';

/** What a registry runs on, whichever process hosts it (the registry alone, or the all-in-one). */
export interface RegistryBase {
  engines: Pick<Engines, 'store' | 'bus' | 'queue'>;
  logger: Logger;
  clock: Clock;
  version: string;
  /** The running config (the all-in-one's follows reloads). */
  config: () => PlatformConfig;
  /** The process's environment (`AP_FLEET_ADOPT`, docs/scale-out.md); default none. */
  env?: Record<string, string | undefined>;
  /** Which process hosts it (`registry`, `platform`), as the fleet agreement records it; default `registry`. */
  processName?: string;
}

/**
 * The registry's own adapters (the one place that picks them): its signing key from
 * `[registry] signing_key_file` or `<data_dir>/registry/signing-key.pem` (made at first start),
 * its archives in `[registry.s3]` or under `archive_dir` (default `<data_dir>/registry/archives`). Returns the app's deps and
 * what closes them.
 */
export async function openRegistryDeps(
  base: RegistryBase,
): Promise<{ deps: RegistryAppDeps; close: () => Promise<void> }> {
  const boot = base.config();
  // The registry's boot gate (docs/registry-auth.md): auth disabled on a network-reachable bind is refused.
  const gate = checkRegistryBootGate(boot);
  if (!gate.ok) throw new ConfigError([gate.reason]);
  if (gate.warning !== undefined) base.logger.warn(gate.warning);
  const dataDir = join(boot.storage.data_dir, 'registry');
  const keyPath = boot.registry.signing_key_file || join(dataDir, 'signing-key.pem');
  const { signer, created } = await loadOrCreateSigningKey(keyPath);
  if (created)
    base.logger.info(
      { path: keyPath, public_key: signer.publicKey.public_key },
      'registry signing key created (platforms trust it through [catalog] trusted_keys)',
    );
  const { store, bus } = base.engines;
  // Every registry node signs with the same key: one holding another refuses to start (docs/scale-out.md).
  await agreeWithFleetAtBoot([signingKeyClaim('registry_signing_key', signer.publicKey.key_id)], {
    store,
    env: base.env ?? {},
    processName: base.processName ?? 'registry',
    now: () => base.clock.now(),
    log: base.logger,
  });
  // Records written with bare identities are qualified once, before the listener opens (docs/registry.md "Identities").
  await migrateLegacyIdentities({ store, clock: base.clock, logger: base.logger });
  // Files under archive_dir (default <data_dir>/registry/archives), or [registry.s3] (docs/registry-storage.md).
  const archives: ArchiveStore = openArchiveStore(boot.registry, boot.storage.data_dir);
  const packages = createPackageRegistry({
    store,
    bus,
    archives,
    signer,
    clock: base.clock,
    logger: base.logger,
  });
  return {
    // `[registry]` is read once, at start: a reload reports it as restart-required
    // (RESTART_REQUIRED_KEYS), so the running registry keeps the settings it started with.
    deps: {
      ...base,
      store,
      bus,
      settings: () => boot.registry,
      packages,
      archives,
      signer,
      allowPrivateTargets: () => base.config().network.allow_private_targets,
      auditEnabled: () => base.config().audit.enabled,
    },
    close: () => archives.close(),
  };
}

/**
 * The registry listener over `base`, its adapters opened when it starts and closed when it stops:
 * what `[surfaces] registry = true` adds to the all-in-one (apps/platform), and what the registry
 * alone runs.
 */
export function composeRegistryService(base: RegistryBase): RegistryService {
  let opened: { service: RegistryService; close: () => Promise<void> } | null = null;
  return {
    name: 'registry',
    get address() {
      return opened?.service.address ?? null;
    },
    async start() {
      const { deps, close } = await openRegistryDeps(base);
      const service = createRegistryService({ ...deps, listen: base.config().registry.listen });
      try {
        const started = await service.start();
        opened = { service, close };
        base.logger.info({ address: service.address }, `registry surface at ${service.address}`);
        return started;
      } catch (error) {
        await close();
        throw error;
      }
    },
    async stop() {
      const running = opened;
      opened = null;
      if (running === null) return;
      await running.service.stop();
      await running.close();
    },
  };
}

/**
 * The registry running alone: its engines from `[runtime]` (packages' metadata lives in the
 * store) and its listener on `[registry] listen`; the boot line ends with
 * `listening on <address>`.
 */
export async function composeRegistry(
  loaded: LoadedConfig,
  context: ComposeContext,
  options: ComposeOptions = {},
): Promise<ComposedProcess> {
  const boot = loaded.config;
  const { clock, logger, engines } = await openProcess(boot, context, options);
  const registry = composeRegistryService({
    engines,
    logger,
    clock,
    version: platformVersion(),
    config: () => boot,
    env: context.env,
    processName: context.name,
  });
  return {
    logger,
    services: [registry],
    close: () => engines.close(),
    bootDetail: () => `listening on ${registry.address}`,
  };
}
