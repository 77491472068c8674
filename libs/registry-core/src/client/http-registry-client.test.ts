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
