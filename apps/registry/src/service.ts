import type { ProcessService } from '@agent-platform/engines';
import { closeGracefully, listenOn } from '@agent-platform/api';
import {
  buildRegistryApp,
  type BuildRegistryAppOptions,
  type RegistryApp,
  type RegistryAppDeps,
} from './registry-app.ts';

export interface RegistryService extends ProcessService {
  /** Where clients reach it (`http://127.0.0.1:4210`, `unix:/path`), once started. */
  readonly address: string | null;
}

/**
 * The registry listener as a service (STYLE §1): listens on `[registry] listen` the way the api
 * listens on `[server] listen` (the api's listener: host:port or unix:/path), and on stop closes
 * after the requests in flight finish.
 */
export function createRegistryService(
  deps: RegistryAppDeps & { listen: string },
  options: BuildRegistryAppOptions = {},
): RegistryService {
  let app: RegistryApp | null = null;
  let address: string | null = null;
  return {
    name: 'registry',
    get address() {
      return address;
    },
    async start() {
      const built = await buildRegistryApp(deps, options);
      address = await listenOn(built, deps.listen, { tls: false });
      app = built;
      return { address };
    },
    async stop() {
      const running = app;
      app = null;
      if (running !== null) await closeGracefully(running);
    },
  };
}
