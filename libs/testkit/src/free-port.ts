import { createServer } from 'node:net';

/** Ports this process handed out already, so two calls never give the same one (bounded: oldest forgotten first). */
const handedOut = new Set<number>();
const REMEMBERED_PORTS = 4096;

/**
 * A port free right now on loopback (or on `host`, an address of this machine): bind port 0, read what the OS chose, release it. Another
 * process could take it before the caller binds it; for a test-spawned server that race is rare
 * enough, and the server's start then fails loudly rather than meeting a stranger. The OS may
 * choose a port it chose a moment ago (released, so free again): two servers of one test given
 * the same port would collide, so a port this process handed out already is never handed out again
 * (seen: two api nodes of one fleet both given 127.0.0.1:40803).
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (;;) {
    const port = await boundPort(host);
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    if (handedOut.size > REMEMBERED_PORTS) handedOut.delete(handedOut.values().next().value!);
    return port;
  }
}

async function boundPort(host: string): Promise<number> {
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
