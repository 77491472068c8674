import type { ApiDeps } from '../deps.ts';
import { createRevocationWatcher, type RevocationWatcher } from './revocation-watcher.ts';

/**
 * The revocation watcher of a process with the api (the api alone and the all-in-one, through
 * run-process.ts): every api node of a fleet runs one, since applying is idempotent and claimed
 * in the store (docs/catalog.md "Revocations").
 */
export function composeRevocationWatcher(deps: ApiDeps, env: Record<string, string | undefined>, fetchImpl?: typeof fetch): RevocationWatcher {
  return createRevocationWatcher({
    revocations: deps.revocations,
    bus: deps.bus,
    logger: deps.logger,
    settings: () => deps.config.current().catalog,
    env,
    ...(fetchImpl === undefined ? {} : { fetch: fetchImpl }),
  });
}
