import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmbeddedBus } from '@agent-platform/bus/embedded';
import { installErrorHandling } from '@agent-platform/api';
import { defaultConfig } from '@agent-platform/config';
import { REGISTRY_ROLES, type PlatformConfig, type RegistryRole } from '@agent-platform/contracts';
import { systemClock, type Clock } from '@agent-platform/domain';
import { createLogger } from '@agent-platform/observability';
import { createPackageRegistry, createSigner, openFsArchiveStore } from '@agent-platform/registry-core';
import type { Store } from '@agent-platform/store';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController } from 'fastify';
import { installRegistryAuth } from '../auth/install-registry-auth.ts';
import type { RegistryApp } from '../registry-app.ts';
import type { RegistryRouteDeps, RegistryRoutePlugin } from '../routes/registry-route.ts';

/** Header a test sets to call as someone: `<identity>:<role>`, e.g. `alice:publisher`. Test apps only. */
export const TEST_CALLER_HEADER = 'x-test-caller';

export interface RegistryTestAppOptions {
  store: Store;
  plugins: readonly RegistryRoutePlugin[];
  clock?: Clock;
  /** `[registry.auth] mode` (default disabled: every caller the anonymous registry admin). */
  authMode?: PlatformConfig['registry']['auth']['mode'];
}

/**
 * A registry app built the way registry-app.ts builds it (Fastify with TypeBox types, the api's
 * error handling, the registry auth hook) with the given route plugins registered, for tests.
 * One addition, for tests only: a caller named in the
 * `x-test-caller` header replaces the one the auth hook set, so that a test can act as two
 * identities with different roles without standing up registry keys.
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
  installRegistryAuth(app, deps);
  app.addHook('onRequest', async (request) => {
    const header = request.headers[TEST_CALLER_HEADER];
    if (typeof header !== 'string') return;
    const [identity = '', role = ''] = header.split(':');
    if (identity === '' || !(REGISTRY_ROLES as readonly string[]).includes(role)) throw new Error(`bad ${TEST_CALLER_HEADER} header '${header}'`);
    request.registryCaller = { identity, role: role as RegistryRole, key_id: null, issuer: null, authenticated: true };
  });
  for (const plugin of options.plugins) await plugin(app, deps);
  app.addHook('onClose', async () => {
    await bus.close();
    await rm(archiveDir, { recursive: true, force: true });
  });
  await app.ready();
  return app;
}
