import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultConfig } from '@agent-platform/config';
import type { PlatformConfig, RegistryRole } from '@agent-platform/contracts';
import { systemClock, type Clock } from '@agent-platform/domain';
import { openEngines, platformVersion, type Engines } from '@agent-platform/engines';
import { createLogger } from '@agent-platform/observability';
import { ANONYMOUS_REGISTRY_ADMIN } from '../auth/registry-access.ts';
import { openRegistryDeps } from '../compose.ts';
import type { RegistryApp, RegistryAppDeps } from '../registry-app.ts';
import { createRegistryService, type RegistryService } from '../service.ts';

/** Headers a test sends to act as someone (only with `installTestAuth`; never in a real registry). */
export const TEST_IDENTITY_HEADER = 'x-test-identity';
export const TEST_ROLE_HEADER = 'x-test-role';

/**
 * A test stand-in for the registry auth hook: the caller is who the test headers say (the
 * anonymous registry admin without them, as in auth mode disabled). It lets the HTTP tests act as
 * several identities before registry keys exist; the real hook is installRegistryAuth.
 */
export function installTestAuth(app: RegistryApp): void {
  app.decorateRequest('registryCaller', null as never);
  app.addHook('onRequest', async (request) => {
    const identity = request.headers[TEST_IDENTITY_HEADER];
    const role = request.headers[TEST_ROLE_HEADER];
    request.registryCaller =
      typeof identity === 'string'
        ? {
            identity,
            role: (typeof role === 'string' ? role : 'publisher') as RegistryRole,
            key_id: null,
            issuer: null,
            authenticated: true,
          }
        : ANONYMOUS_REGISTRY_ADMIN;
  });
}

export interface TestRegistry {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  deps: RegistryAppDeps;
  engines: Engines;
  config: PlatformConfig;
  /** The log lines at warn and above written so far (the last 100). */
  logs(): string;
  close(): Promise<void>;
}

/**
 * A registry on a real loopback listener over the embedded engines in a temp data dir, built as
 * compose.ts builds it (signing key made at first start, filesystem archives), with the test
 * auth hook unless `realAuth`.
 */
export async function startTestRegistry(
  options: {
    registry?: Partial<PlatformConfig['registry']>;
    realAuth?: boolean;
    /** Writes into the store before the registry opens it (records an older registry left). */
    seed?: (store: Engines['store']) => Promise<void>;
    /** `[network] allow_private_targets`; true by default here (the test identity providers listen on loopback). */
    allowPrivateTargets?: boolean;
    /** The registry's clock (expiries, timestamps); default the system clock. */
    clock?: Clock;
  } = {},
): Promise<TestRegistry> {
  const dir = await mkdtemp(join(tmpdir(), 'ap-registry-http-'));
  const base = defaultConfig();
  const config: PlatformConfig = {
    ...base,
    storage: { ...base.storage, data_dir: join(dir, 'data') },
    registry: { ...base.registry, listen: '127.0.0.1:0', ...options.registry },
    network: { ...base.network, allow_private_targets: options.allowPrivateTargets ?? true },
  };
  const { logger, buffer } = createLogger({ level: 'warn', bufferLines: 100, destination: 'silent' });
  const engines = await openEngines(config, {
    clock: options.clock ?? systemClock,
    logger,
    dataDir: config.storage.data_dir,
    processName: 'registry-test',
  });
  let service: RegistryService | null = null;
  let closeDeps = async () => {};
  try {
    await options.seed?.(engines.store);
    const opened = await openRegistryDeps({
      engines,
      logger,
      clock: options.clock ?? systemClock,
      version: platformVersion(),
      config: () => config,
    });
    closeDeps = opened.close;
    service = createRegistryService(
      { ...opened.deps, engines, listen: config.registry.listen },
      options.realAuth === true ? {} : { installAuth: installTestAuth },
    );
    await service.start();
    return {
      url: service.address ?? '',
      deps: opened.deps,
      engines,
      config,
      logs: () => buffer.lines().join('\n'),
      close: async () => {
        await service?.stop();
        await closeDeps();
        await engines.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await closeDeps();
    await engines.close();
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}
