import type { AddressInfo } from 'node:net';
import { parseListenAddress } from '@agent-platform/config';
import type { ProcessService } from '@agent-platform/engines';
import { buildRegistryApp, type RegistryApp, type RegistryAppDeps } from './registry-app.ts';

export interface RegistryService extends ProcessService {
  /** Where clients reach it (`http://127.0.0.1:4210`, `unix:/path`), once started. */
  readonly address: string | null;
}

/**
 * The registry listener as a service (STYLE §1): listens on `[registry] listen` (host:port or
 * unix:/path, like `[server] listen`), and on stop closes the listener after the requests in
 * flight finish.
 */
export function createRegistryService(deps: RegistryAppDeps & { listen: string }): RegistryService {
  let app: RegistryApp | null = null;
  let address: string | null = null;
  return {
    name: 'registry',
    get address() {
      return address;
    },
    async start() {
      const listen = parseListenAddress(deps.listen);
      const built = buildRegistryApp(deps);
      if (listen.kind === 'unix') await built.listen({ path: listen.path });
      else await built.listen({ host: listen.host, port: listen.port });
      app = built;
      if (listen.kind === 'unix') {
        address = `unix:${listen.path}`;
      } else {
        const bound = built.server.address() as AddressInfo;
        address = `http://${bound.family === 'IPv6' ? `[${bound.address}]` : bound.address}:${bound.port}`;
      }
      return { address };
    },
    async stop() {
      await app?.close();
      app = null;
    },
  };
}
