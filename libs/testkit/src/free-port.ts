import { createServer } from 'node:net';

/**
 * A port free right now on loopback (or on `host`, an address of this machine): bind port 0, read what the OS chose, release it. Another
 * process could take it before the caller binds it; for a test-spawned server that race is rare
 * enough, and the server's start then fails loudly rather than meeting a stranger.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('could not read the bound port');
  return address.port;
}
