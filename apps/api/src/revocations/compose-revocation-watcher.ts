import { registryClientOf } from '../compose-registry.ts';
import type { ApiDeps } from '../deps.ts';
import { createRevocationWatcher, type RevocationWatcher } from './revocation-watcher.ts';

/**
 * The revocation watcher of a process with the api (the api alone and the all-in-one, through
 * run-process.ts): every api node of a fleet runs one, since applying is idempotent and claimed
 * in the store (docs/catalog.md "Revocations"). It reads the feed through the platform's registry
 * client (compose-registry.ts), the same HTTP path as install by name and search.
 */
export function composeRevocationWatcher(
  deps: ApiDeps,
  env: Record<string, string | undefined>,
): RevocationWatcher {
  const catalog = () => deps.config.current().catalog;
  return createRevocationWatcher({
    revocations: deps.revocations,
    bus: deps.bus,
    logger: deps.logger,
    settings: catalog,
    registry: registryClientOf(catalog, env),
  });
}
