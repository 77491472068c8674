import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError, createConfigHolder, loadVaultKey, type LoadedConfig } from '@agent-platform/config';
import type { PlatformConfig } from '@agent-platform/contracts';
import {
  createAgentLifecycle,
  createAgentStats,
  createAgentStore,
  createAuditTrail,
  createAuthBackoff,
  createCatalogService,
  createKeyService,
  createMemoryStore,
  createSessionStore,
  createVault,
  directoryPackageSource,
  systemClock,
  type Clock,
} from '@agent-platform/domain';
import { createLogger, createMetrics } from '@agent-platform/observability';
import { createProviders } from '@agent-platform/providers';
import { createEmbeddedBus } from '@agent-platform/bus/embedded';
import { openEmbeddedQueue } from '@agent-platform/queue/embedded';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import type { ApiDeps } from './deps.ts';
import { instrumentKeys, instrumentVault } from './instrument.ts';
import { openLicence } from './open-licence.ts';
import { platformVersion } from './platform-version.ts';

export interface ComposeApiOptions {
  env: Record<string, string | undefined>;
  /** Where log lines go besides the in-memory buffer; default stdout. */
  logDestination?: NodeJS.WritableStream | 'stdout' | 'silent';
  clock?: Clock;
  /** Directory relative paths were resolved against (reload needs the same); default cwd. */
  cwd?: string;
  /** Bound late by main.ts: POST /shutdown calls it once the 202 is on the wire. */
  requestShutdown?: () => void;
}

export interface ComposedApi {
  deps: ApiDeps;
  /** Closes the engines (queue, bus, store) in reverse order of opening. */
  close(): Promise<void>;
}

/** Engines this build ships; the distributed adapters come later. */
function refuseUnavailableEngines(config: PlatformConfig): void {
  const problems = (['bus', 'store', 'queue'] as const)
    .filter((port) => config.runtime[port] !== 'embedded')
    .map((port) => `runtime.${port} = "${config.runtime[port]}" is not available in this build yet; use "embedded"`);
  if (problems.length > 0) throw new ConfigError(problems, { heading: 'Unsupported runtime engines:' });
}

/**
 * The api's composition root: the only place that picks adapters from `config.runtime` (STYLE
 * §1). Opens the store at `<data_dir>/platform.db` and the queue at `<data_dir>/queue.db`, loads
 * the vault key and the licence, builds the domain services over them and wires metrics around them.
 */
export async function composeApi(loaded: LoadedConfig, options: ComposeApiOptions): Promise<ComposedApi> {
  const config = createConfigHolder(loaded, { env: options.env, cwd: options.cwd ?? process.cwd() });
  const boot = config.current();
  refuseUnavailableEngines(boot);
  const clock = options.clock ?? systemClock;
  const { logger, buffer } = createLogger({
    level: boot.logging.level,
    bufferLines: boot.logging.buffer_lines,
    destination: options.logDestination ?? 'stdout',
  });
  const metrics = createMetrics();
  const dataDir = boot.storage.data_dir;
  await mkdir(dataDir, { recursive: true, mode: 0o700 });

  const closers: Array<() => Promise<void>> = [];
  const close = async (): Promise<void> => {
    for (const closeOne of closers.reverse()) {
      await closeOne().catch((err: unknown) => logger.error({ err }, 'closing an engine failed'));
    }
  };
  try {
    const store = await openEmbeddedStore({ path: join(dataDir, 'platform.db'), clock: () => clock.now() });
    closers.push(() => store.close());
    const bus = createEmbeddedBus({ onError: (err) => logger.error({ err }, 'bus error') });
    closers.push(() => bus.close());
    const queue = await openEmbeddedQueue({ path: join(dataDir, 'queue.db'), clock, onError: (err) => logger.error({ err }, 'queue error') });
    closers.push(() => queue.close());
    const vaultKey = await loadVaultKey({ dataDir, env: options.env, envName: boot.vault.key_env });
    const licence = await openLicence({ config, store, clock, log: logger });
    const agents = createAgentStore(store);
    const sessions = createSessionStore(store, clock);
    const memory = createMemoryStore(store, agents, clock);
    const version = platformVersion();

    const deps: ApiDeps = {
      config,
      version,
      clock,
      logger,
      logBuffer: buffer,
      metrics,
      store,
      bus,
      queue,
      keys: instrumentKeys(createKeyService({ store, clock }), metrics),
      audit: createAuditTrail({ store, clock, enabled: boot.audit.enabled, onAppend: () => metrics.auditEntriesTotal.inc() }),
      vault: instrumentVault(createVault({ store, clock, key: vaultKey }), metrics),
      authBackoff: createAuthBackoff({ store, clock, settings: () => config.current().auth.rate_limit }),
      models: createProviders(() => config.current(), {
        env: options.env,
        onRetry: (event) => logger.warn(event, 'model provider call failed; retrying'),
      }),
      licence,
      agents,
      sessions,
      agentStats: createAgentStats(store),
      lifecycle: createAgentLifecycle({ store, agents, bus, clock }),
      catalog: createCatalogService({ store, agents, sessions, memory, clock, source: directoryPackageSource(version) }),
      memory,
      requestShutdown: options.requestShutdown ?? (() => logger.warn('shutdown requested but no handler is bound')),
    };
    return { deps, close };
  } catch (error) {
    await close();
    throw error;
  }
}
