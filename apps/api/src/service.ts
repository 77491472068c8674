import { readFile } from 'node:fs/promises';
import { bootGateForReload } from '@agent-platform/config';
import type { ApiApp, RoutePlugin } from './api-app.ts';
import { buildApi } from './build-api.ts';
import type { ApiDeps } from './deps.ts';
import { closeGracefully, listenOn } from './listener.ts';

export interface ApiService {
  /** Builds the app and listens on `[server] listen`; resolves with the address clients use. */
  start(): Promise<{ address: string }>;
  /** Stops accepting connections and waits for in-flight requests to finish. */
  stop(): Promise<void>;
  /** The running app (for `inject`), once started. */
  readonly app: ApiApp | null;
}

export interface ApiServiceOptions {
  /** Extra route groups (surfaces mounted by the all-in-one root, test-only routes). */
  routes?: readonly RoutePlugin[];
}

/** The api surface as a service (STYLE §1): `createApiService(deps) -> {start, stop}`. */
export function createApiService(deps: ApiDeps, options: ApiServiceOptions = {}): ApiService {
  let app: ApiApp | null = null;
  let removeGate = (): void => undefined;
  return {
    get app() {
      return app;
    },
    async start() {
      const server = deps.config.current().server;
      // Native TLS: read at start, so a renewed certificate is picked up by a restart.
      const https = server.tls ? { cert: await readFile(server.tls.cert_file), key: await readFile(server.tls.key_file) } : null;
      const built = await buildApi(deps, { routes: options.routes ?? [], https });
      const address = await listenOn(built, server.listen, { tls: https !== null });
      app = built;
      // Spec §Authentication rule 4 holds for the life of the listener, not only at boot: a
      // reload that would fail the boot gate on it is refused and changes nothing.
      const live = deps.config.current();
      removeGate = deps.config.addGuard((candidate) => bootGateForReload(live, candidate));
      return { address };
    },
    async stop() {
      removeGate();
      const running = app;
      app = null;
      if (running !== null) await closeGracefully(running);
    },
  };
}
