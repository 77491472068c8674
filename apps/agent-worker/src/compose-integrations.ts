import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { ConfigHolder } from '@agent-platform/config';
import { createIntegrationHost, type Clock, type IntegrationHost, type Vault } from '@agent-platform/domain';
import type { Bus } from '@agent-platform/bus';
import { createIntegrationConnector } from '@agent-platform/integrations';
import type { Logger } from '@agent-platform/observability';
import type { Store } from '@agent-platform/store';

/** What an integration host runs over; the all-in-one root passes the api's. */
export interface IntegrationHostSources {
  config: ConfigHolder;
  clock: Clock;
  logger: Logger;
  store: Store;
  bus: Bus;
  vault: Pick<Vault, 'resolve'>;
  /** The process environment: stdio servers inherit it minus the platform's secrets. */
  env: Record<string, string | undefined>;
  /** The platform's version, sent as the MCP client version. */
  version: string;
}

/**
 * The integration host of a process where agents run (an agent worker, or the all-in-one):
 * it connects the integrations the fleet wants connected, here, and is this process's
 * IntegrationTools for the tool loop. Stdio servers run in `[storage] data_dir` and inherit the
 * environment minus `[vault] key_env`, providers' `api_key_env`, `[catalog] registry_key_env`
 * and secret-looking names.
 */
export function composeIntegrationHost(
  sources: IntegrationHostSources,
  process: 'agent-worker' | 'platform',
): IntegrationHost {
  const log = sources.logger.child({ service: 'integrations' });
  const config = (): ReturnType<ConfigHolder['current']> => sources.config.current();
  const connector = createIntegrationConnector({
    env: sources.env,
    secretEnvNames: () => [
      config().vault.key_env,
      ...config().providers.flatMap((p) => (p.api_key_env === undefined ? [] : [p.api_key_env])),
      ...[config().catalog.registry_key_env].filter((name) => name !== undefined),
    ],
    allowPrivateTargets: () => config().network.allow_private_targets,
    cwd: config().storage.data_dir,
    platformVersion: sources.version,
  });
  return createIntegrationHost({
    store: sources.store,
    bus: sources.bus,
    clock: sources.clock,
    connector,
    vault: sources.vault,
    nodeId: `${process}-${hostname()}-${globalThis.process.pid}-${randomUUID().slice(0, 8)}`,
    process,
    settings: () => config().integrations,
    log: (level, context, message) => log[level](context, message),
  });
}
