import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FeedFetchError, fetchRevocationFeed } from './fetch-revocation-feed.ts';

// A registry that misbehaves in each way a poll must survive, on loopback.
let server: Server;
let base: string;
const seen: Array<{ url: string; authorization: string | undefined }> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', authorization: req.headers.authorization });
    if (req.url?.startsWith('/down/')) return void res.writeHead(503).end('maintenance');
    if (req.url?.startsWith('/html/')) return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>');
    if (req.url?.startsWith('/empty/')) return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"entries": []}');
    if (req.url?.startsWith('/slow/')) return; // never answers
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ feed: 'a.b.c' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const source = (path: string, bearer: string | null = null) => ({ registryUrl: `${base}${path}`, timeoutMs: 300, bearer });

describe('fetchRevocationFeed', () => {
  it('asks for the feed since the cursor, under the registry path, with the bearer', async () => {
    expect(await fetchRevocationFeed(source('/registry', 'reg_sk_secret'), 12)).toBe('a.b.c');
    expect(seen.at(-1)).toEqual({ url: '/registry/revocations?since=12', authorization: 'Bearer reg_sk_secret' });
    await fetchRevocationFeed(source(''), 0);
    expect(seen.at(-1)).toEqual({ url: '/revocations?since=0', authorization: undefined });
  });

  it('fails with a message naming the problem and never the bearer', async () => {
    const failures = await Promise.all(
      ['/down', '/html', '/empty', '/slow'].map((path) => fetchRevocationFeed(source(path, 'reg_sk_secret'), 0).then(() => null, (error: unknown) => error as Error)),
    );
    expect(failures.every((e) => e instanceof FeedFetchError)).toBe(true);
    expect(failures.map((e) => e?.message)).toEqual([
      `GET ${base}/down/revocations answered 503`,
      `GET ${base}/html/revocations answered a body that is not JSON`,
      `GET ${base}/empty/revocations answered no "feed" string`,
      `GET ${base}/slow/revocations failed: no answer within 300 ms`,
    ]);
    await expect(fetchRevocationFeed({ ...source(''), registryUrl: 'http://127.0.0.1:1' }, 0)).rejects.toThrow(/^GET http:\/\/127\.0\.0\.1:1\/revocations failed: /);
  });
});
