import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpRegistryClient } from './http-registry-client.ts';
import { RegistryRequestError } from './registry-request-error.ts';
import { exampleArchive, startFakeRegistry, type FakeRegistry } from './testing/index.ts';

let registry: FakeRegistry;
let lossSummary: Uint8Array;
beforeAll(async () => {
  registry = await startFakeRegistry();
  lossSummary = await exampleArchive('loss-summary');
  registry.add(lossSummary);
  registry.add(await exampleArchive('loss-summary', { version: '1.1.0' }));
});
afterAll(async () => registry.close());

const client = (options: { token?: string; timeoutMs?: number; maxArchiveBytes?: number; url?: string } = {}) =>
  createHttpRegistryClient({
    url: options.url ?? registry.url,
    timeoutMs: options.timeoutMs ?? 5000,
    timeoutSetting: '[catalog] request_timeout_ms',
    ...(options.token === undefined ? {} : { token: () => options.token }),
    ...(options.maxArchiveBytes === undefined ? {} : { maxArchiveBytes: options.maxArchiveBytes }),
  });

async function failure(promise: Promise<unknown>): Promise<RegistryRequestError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof RegistryRequestError)) throw new Error(`expected a RegistryRequestError, got ${String(error)}`);
  return error;
}

describe('the registry client', () => {
  it('reads versions highest first, one version, and the exact archive bytes; null for what the registry does not know', async () => {
    const c = client();
    expect((await c.versions('loss-summary'))?.map((v) => v.version)).toEqual(['1.1.0', '1.0.0']);
    expect(await c.versions('no-such-package')).toBeNull();
    expect((await c.version('loss-summary', '1.0.0'))?.type).toBe('skill');
    expect(await c.version('loss-summary', '9.9.9')).toBeNull();
    expect(Buffer.from((await c.download('loss-summary', '1.0.0')) ?? [])).toEqual(Buffer.from(lossSummary));
    expect(await c.download('loss-summary', '9.9.9')).toBeNull();
    expect(await c.collection('nothing')).toBeNull();
    expect((await c.signingKey()).public_key).toBe(registry.publicKey);
  });

  it('sends the bearer only when one is configured, and the search query as given', async () => {
    const before = registry.requests.length;
    await client().versions('loss-summary');
    await client({ token: 'reg_sk_secret' }).search({ q: 'loss', type: 'skill', per_page: 5 });
    const [anonymous, keyed] = registry.requests.slice(before);
    expect(anonymous?.authorization).toBeUndefined();
    expect(keyed?.authorization).toBe('Bearer reg_sk_secret');
    expect(keyed?.query).toEqual({ q: 'loss', type: 'skill', per_page: '5' });
  });

  it('fails with a ProviderError within the timeout when the registry does not answer', async () => {
    registry.mode = 'hang';
    try {
      const started = Date.now();
      const error = await failure(client({ timeoutMs: 300 }).versions('loss-summary'));
      expect(Date.now() - started).toBeLessThan(3000);
      expect(error.category).toBe('ProviderError');
      expect(error.message).toContain('no answer to GET /packages/loss-summary/versions within 300 ms ([catalog] request_timeout_ms)');
      expect(error.details).toMatchObject({ registry: registry.url, reason: 'timeout' });
    } finally {
      registry.mode = 'ok';
    }
  });

  it('passes on a 5xx with the registry message, and a refusal with its status', async () => {
    registry.mode = 'fail';
    try {
      const error = await failure(client().versions('loss-summary'));
      expect(error.status).toBe(503);
      expect(error.message).toContain('answered 503: Internal: the registry store is down');
      expect(error.retryable).toBe(true);
    } finally {
      registry.mode = 'ok';
    }
    registry.acceptedKey = 'reg_sk_right';
    try {
      const error = await failure(client({ token: 'reg_sk_wrong' }).publish(lossSummary));
      expect(error.status).toBe(401);
      expect(error.message).toContain('POST /packages answered 401: AuthError');
      expect(error.message).not.toContain('reg_sk_wrong');
    } finally {
      registry.acceptedKey = undefined;
    }
  });

  it('says a registry is unreachable, and refuses an answer over the size limit', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const down = await failure(client({ url: `http://127.0.0.1:${port}` }).versions('loss-summary'));
    expect(down.message).toMatch(/unreachable \(ECONNREFUSED\)/);
    expect(down.status).toBeNull();

    const big = await failure(client({ maxArchiveBytes: 100 }).download('loss-summary', '1.0.0'));
    expect(big.message).toContain('is over 100 bytes');
  });

  describe('an answer that is not the wire format', () => {
    let odd: Server;
    let url: string;
    beforeAll(async () => {
      odd = createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"versions": "many"}');
      });
      await new Promise<void>((resolve) => odd.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(odd.address() as AddressInfo).port}/prefix`;
    });
    afterAll(async () => new Promise<void>((resolve) => odd.close(() => resolve())));

    it('is refused naming the expected shape', async () => {
      const error = await failure(client({ url }).versions('loss-summary'));
      expect(error.message).toContain('/prefix: the answer to GET /packages/loss-summary/versions is not a RegistryVersionList');
    });
  });
});

describe('the registry client, revocation feed', () => {
  // A registry that misbehaves in each way a revocation poll must survive, on loopback.
  let feedServer: Server;
  let base: string;
  const seen: Array<{ url: string; authorization: string | undefined }> = [];
  beforeAll(async () => {
    feedServer = createServer((req, res) => {
      seen.push({ url: req.url ?? '', authorization: req.headers.authorization });
      if (req.url?.startsWith('/down/')) return void res.writeHead(503).end('maintenance');
      if (req.url?.startsWith('/html/')) return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>');
      if (req.url?.startsWith('/empty/')) return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"entries": []}');
      if (req.url?.startsWith('/slow/')) return; // never answers
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ feed: 'a.b.c' }));
    });
    await new Promise<void>((resolve) => feedServer.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(feedServer.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    feedServer.closeAllConnections();
    await new Promise<void>((resolve) => feedServer.close(() => resolve()));
  });

  it('asks for the feed since the cursor, under the registry path, with the bearer only when one is configured', async () => {
    expect(await client({ url: `${base}/registry`, token: 'reg_sk_secret' }).revocations(12)).toBe('a.b.c');
    expect(seen.at(-1)).toEqual({ url: '/registry/revocations?since=12', authorization: 'Bearer reg_sk_secret' });
    expect(await client({ url: base }).revocations(0)).toBe('a.b.c');
    expect(seen.at(-1)).toEqual({ url: '/revocations?since=0', authorization: undefined });
    await expect(client({ url: base }).revocations(-1)).rejects.toThrow(RangeError);
  });

  it('fails with a ProviderError naming the problem and never the bearer', async () => {
    const failures = await Promise.all(
      ['/down', '/html', '/empty', '/slow'].map((path) => failure(client({ url: `${base}${path}`, token: 'reg_sk_secret', timeoutMs: 300 }).revocations(0))),
    );
    expect(failures.map((e) => e.message)).toEqual([
      `registry ${base}/down: GET /revocations?since=0 answered 503`,
      `registry ${base}/html: the answer to GET /revocations?since=0 is not a RevocationFeed`,
      `registry ${base}/empty: the answer to GET /revocations?since=0 is not a RevocationFeed`,
      `registry ${base}/slow: no answer to GET /revocations?since=0 within 300 ms ([catalog] request_timeout_ms)`,
    ]);
    expect(failures.map((e) => e.details.reason)).toEqual(['registry_failed', 'bad_answer', 'bad_answer', 'timeout']);
    expect(failures.every((e) => e.category === 'ProviderError' && !JSON.stringify(e).includes('reg_sk_secret'))).toBe(true);
    const down = await failure(client({ url: 'http://127.0.0.1:1' }).revocations(0));
    expect(down.message).toMatch(/^registry http:\/\/127\.0\.0\.1:1: unreachable \(/);
  });

  it('gives up at once when the caller cancels (a watcher stopping), long before the timeout', async () => {
    const stop = new AbortController();
    const started = Date.now();
    const pending = failure(client({ url: `${base}/slow`, timeoutMs: 30_000 }).revocations(0, { signal: stop.signal }));
    setTimeout(() => stop.abort(), 100);
    const error = await pending;
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(error.message).toBe(`registry ${base}/slow: GET /revocations?since=0 cancelled`);
    expect(error.details.reason).toBe('cancelled');
  });

  it('never shows user info or a query of the configured URL in its messages', async () => {
    const c = client({ url: 'http://user:pa55word@127.0.0.1:1/registry?token=abc' });
    expect(c.url).toBe('http://127.0.0.1:1/registry');
    const error = await failure(c.revocations(0));
    expect(error.message).toContain('the URL carries user info (user:password@), which is never sent');
    expect(JSON.stringify({ message: error.message, details: error.details })).not.toMatch(/pa55word|token=abc/);
  });
});
