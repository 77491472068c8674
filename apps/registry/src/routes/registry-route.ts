import type { PlatformConfig } from '@agent-platform/contracts';
import type { Clock } from '@agent-platform/domain';
import type { Logger } from '@agent-platform/observability';
import type { Bus } from '@agent-platform/bus';
import type { ArchiveStore, PackageRegistry, RegistrySigner } from '@agent-platform/registry-core';
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
  /** The platform version, reported by /health and the OpenAPI document. */
  version: string;
  /** The `[registry]` settings as currently loaded. */
  settings: () => PlatformConfig['registry'];
  /** Publish, read, yank, owners, history, revocations (libs/registry-core). */
  packages: PackageRegistry;
  /** Where archive bytes live (for /health; the package service reads and writes them). */
  archives: ArchiveStore;
  /** The registry's signing key (GET /signing-key). */
  signer: RegistrySigner;
  /**
   * Registry keys, issuers, token validators and the failed-attempt lockout (docs/registry-auth.md).
   * Optional: absent, one set is made per store (registryAuthServicesFor); the composition root
   * passes its own to choose the lockout settings (createRegistryAuthServices `rateLimit`).
   */
  auth?: RegistryAuthServices;
  /**
   * `[network] allow_private_targets` (DECISIONS D9): whether an issuer registered through
   * `/admin/issuers` may have its discovery and JWKS fetched from loopback, private or link-local
   * addresses. Absent: never (issuers arrive through the API, so they are not trusted as config is).
   */
  allowPrivateTargets?: () => boolean;
  /** `[audit] enabled`: whether token creation and revocation are audited. Absent: true. */
  auditEnabled?: () => boolean;
}

/** What the auth hook and the auth routes need: no package service, so they can be tested alone. */
export type RegistryAuthDeps = Pick<RegistryRouteDeps, 'store' | 'bus' | 'clock' | 'logger' | 'settings' | 'auth' | 'allowPrivateTargets' | 'auditEnabled'>;

export type RegistryRoutePlugin = (app: RegistryApp, deps: RegistryRouteDeps) => void | Promise<void>;

/** A plugin that needs only the auth deps (the auth routes). */
export type RegistryAuthRoutePlugin = (app: RegistryApp, deps: RegistryAuthDeps) => void | Promise<void>;
