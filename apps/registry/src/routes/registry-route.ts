import type { PlatformConfig } from '@agent-platform/contracts';
import type { Clock } from '@agent-platform/domain';
import type { Logger } from '@agent-platform/observability';
import type { Bus } from '@agent-platform/bus';
import type { Store } from '@agent-platform/store';
import type { RegistryApp } from '../registry-app.ts';
import type { RegistryAuthServices } from '../auth/registry-auth-services.ts';

/**
 * What every registry route plugin receives (one composition root builds it: compose.ts for the
 * registry alone, apps/platform for the all-in-one). Route files add what they need here.
 */
export interface RegistryRouteDeps {
  store: Store;
  bus: Bus;
  clock: Clock;
  logger: Logger;
  /** The `[registry]` settings as currently loaded. */
  settings: () => PlatformConfig['registry'];
  /**
   * Registry keys, issuers, token validators and the failed-attempt lockout (docs/registry-auth.md).
   * Optional: absent, one set is made per store (registryAuthServicesFor); the composition root
   * passes its own to choose the lockout settings (createRegistryAuthServices `rateLimit`).
   */
  auth?: RegistryAuthServices;
}

export type RegistryRoutePlugin = (app: RegistryApp, deps: RegistryRouteDeps) => void | Promise<void>;
