import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmbeddedBus } from '@agent-platform/bus/embedded';
import { installErrorHandling } from '@agent-platform/api';
import { defaultConfig } from '@agent-platform/config';
import type { PlatformConfig } from '@agent-platform/contracts';
import { systemClock, type Clock } from '@agent-platform/domain';
import { createLogger } from '@agent-platform/observability';
import { createPackageRegistry, createSigner, openFsArchiveStore } from '@agent-platform/registry-core';
import type { Store } from '@agent-platform/store';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController } from 'fastify';
import { installRegistryAuth } from '../auth/install-registry-auth.ts';
import { installTestAuth } from './test-registry.ts';
import type { RegistryApp } from '../registry-app.ts';
import type { RegistryRouteDeps, RegistryRoutePlugin } from '../routes/registry-route.ts';

export interface RegistryTestAppOptions {
  store: Store;
  plugins: readonly RegistryRoutePlugin[];
  clock?: Clock;
  /** `[registry.auth] mode` (default disabled: every caller the anonymous registry admin). */
  authMode?: PlatformConfig['registry']['auth']['mode'];
}

/**
 * A registry app built the way registry-app.ts builds it (Fastify with TypeBox types, the api's
 * error handling) with only the given route plugins registered, for tests. In auth mode disabled
 * the caller is who the `x-test-identity` / `x-test-role` headers say (`installTestAuth`, the same
 * stand-in the HTTP tests of test-registry.ts use), so a test can act as several identities
 * without registry keys; any other mode runs the real auth hook.
 */
export async function buildRegistryTestApp(options: RegistryTestAppOptions): Promise<RegistryApp> {
  const { logger } = createLogger({ level: 'silent', bufferLines: 10, destination: 'silent' });
  const bus = createEmbeddedBus();
  const config = defaultConfig();
  config.registry.auth.mode = options.authMode ?? 'disabled';
  const clock = options.clock ?? systemClock;
  // The package service over a scratch archive directory and a fresh signing key, as compose.ts wires them.
  const archiveDir = await mkdtemp(join(tmpdir(), 'ap-registry-test-archives-'));
  const archives = openFsArchiveStore(archiveDir);
  const signer = createSigner(generateKeyPairSync('ed25519').privateKey);
  const packages = createPackageRegistry({ store: options.store, bus, archives, signer, clock, logger });
  const deps: RegistryRouteDeps = { store: options.store, bus, clock, logger, version: 'test', settings: () => config.registry, packages, archives, signer };
  const app = Fastify({
    loggerInstance: logger,
    logController: new LogController({ disableRequestLogging: true }),
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as RegistryApp;
  installErrorHandling(app);
  // Mode disabled (the default): callers are who the test headers say (installTestAuth); else the real hook.
  if (config.registry.auth.mode === 'disabled') installTestAuth(app);
  else installRegistryAuth(app, deps);
  for (const plugin of options.plugins) await plugin(app, deps);
  app.addHook('onClose', async () => {
    await bus.close();
    await rm(archiveDir, { recursive: true, force: true });
  });
  await app.ready();
  return app;
}
