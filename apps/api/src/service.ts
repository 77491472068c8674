import { lstat, readFile, unlink } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { parseListenAddress, type ListenAddress } from '@agent-platform/config';
import type { ApiApp, RoutePlugin } from './api-app.ts';
import { buildApi } from './build-api.ts';
import type { ApiDeps } from './deps.ts';

const IDLE_SWEEP_MS = 25;

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

/**
 * A unix socket left behind by a crashed process would make listen fail with EADDRINUSE. Only a
 * socket is removed: any other file at that path is the operator's and is left alone (listen then
 * fails, naming the path).
 */
async function removeStaleSocket(path: string): Promise<void> {
  const found = await lstat(path).catch(() => null);
  if (found?.isSocket() === true) await unlink(path);
}

function formatAddress(listen: ListenAddress, app: ApiApp, tls: boolean): string {
  if (listen.kind === 'unix') return `unix:${listen.path}`;
  const bound = app.server.address() as AddressInfo;
  const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  return `${tls ? 'https' : 'http'}://${host}:${bound.port}`;
}

/** The api surface as a service (STYLE §1): `createApiService(deps) -> {start, stop}`. */
export function createApiService(deps: ApiDeps, options: ApiServiceOptions = {}): ApiService {
  let app: ApiApp | null = null;
  return {
    get app() {
      return app;
    },
    async start() {
      const server = deps.config.current().server;
      const listen = parseListenAddress(server.listen);
      // Native TLS: read at start, so a renewed certificate is picked up by a restart.
      const https = server.tls ? { cert: await readFile(server.tls.cert_file), key: await readFile(server.tls.key_file) } : null;
      const built = await buildApi(deps, { routes: options.routes ?? [], https });
      if (listen.kind === 'unix') {
        await removeStaleSocket(listen.path);
        await built.listen({ path: listen.path });
      } else {
        await built.listen({ host: listen.host, port: listen.port });
      }
      app = built;
      return { address: formatAddress(listen, built, https !== null) };
    },
    async stop() {
      const running = app;
      app = null;
      if (running === null) return;
      // Fastify's close stops accepting and lets in-flight requests finish, but closes idle
      // keep-alive connections only once, at the start. A connection whose request finishes later
      // would then hold the close open until the client drops it: sweep them as they go idle.
      const closing = running.close();
      const sweep = setInterval(() => running.server.closeIdleConnections(), IDLE_SWEEP_MS);
      try {
        await closing;
      } finally {
        clearInterval(sweep);
      }
    },
  };
}
