import { lstat, unlink } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { parseListenAddress, type ListenAddress } from '@agent-platform/config';
import type { ApiApp } from './api-app.ts';

const IDLE_SWEEP_MS = 25;

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

/**
 * Listens on a `[server] listen` / `[registry] listen` value (host:port, or unix:/path with a
 * stale socket removed first) and returns the address clients use. Every surface listens here.
 */
export async function listenOn(app: ApiApp, address: string, options: { tls: boolean }): Promise<string> {
  const listen = parseListenAddress(address);
  if (listen.kind === 'unix') {
    await removeStaleSocket(listen.path);
    await app.listen({ path: listen.path });
  } else {
    await app.listen({ host: listen.host, port: listen.port });
  }
  return formatAddress(listen, app, options.tls);
}

/**
 * Stops accepting and waits for the requests in flight. Fastify's close closes idle keep-alive
 * connections only once, at the start; a connection whose request finishes later would then hold
 * the close open until the client drops it, so they are swept as they go idle.
 */
export async function closeGracefully(app: ApiApp): Promise<void> {
  const closing = app.close();
  const sweep = setInterval(() => app.server.closeIdleConnections(), IDLE_SWEEP_MS);
  try {
    await closing;
  } finally {
    clearInterval(sweep);
  }
}
