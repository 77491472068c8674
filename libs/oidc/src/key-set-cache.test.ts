import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { createTokenValidator } from './token-validator.ts';
import { TokenRejectedError } from './token-rejected.ts';

// A JWKS endpoint the test controls (what it serves, whether it fails, how slowly), and a clock
// the test moves: the cache's TTL, its refetch cooldown and its fetch limits, end to end through
// a validator.
type Mode = 'ok' | 'fail' | 'huge' | 'slow' | 'redirect';
let server: Server;
let url: string;
let served: JWK[];
let mode: Mode;
let hits: number;
let t: number;
const ISSUER = 'https://issuer.test.example';
const AUDIENCE = 'api://registry';

async function keyPair(kid: string) {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'ES256' };
  const sign = () =>
    new SignJWT({ iss: ISSUER, aud: AUDIENCE, sub: 'svc', exp: Math.floor(t / 1000) + 600, roles: 'writers' })
      .setProtectedHeader({ alg: 'ES256', kid, typ: 'at+jwt' })
      .sign(privateKey);
  return { jwk, sign };
}

beforeEach(async () => {
  served = [];
  mode = 'ok';
  hits = 0;
  t = Date.now();
  server = createServer((_request, response) => {
    hits += 1;
    if (mode === 'fail') return void response.writeHead(500).end();
    if (mode === 'redirect') return void response.writeHead(302, { location: 'http://127.0.0.1:9/elsewhere' }).end();
    if (mode === 'slow') return void setTimeout(() => response.writeHead(200).end(JSON.stringify({ keys: served })), 2_000).unref();
    if (mode === 'huge') return void response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: served, pad: 'x'.repeat(100_000) }));
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: served }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function validator(options: { ttl?: number; cooldown?: number; timeoutMs?: number; maxBytes?: number } = {}) {
  return createTokenValidator(
    {
      issuer: ISSUER,
      audience: AUDIENCE,
      jwks_uri: url,
      role_claim: 'roles',
      allowed_algorithms: ['ES256'],
      role_mapping: { writers: 'writer' },
      jwks_cache_ttl_secs: options.ttl ?? 60,
    },
    {
      roles: ['writer'],
      refetchCooldownSecs: options.cooldown ?? 10,
      now: () => new Date(t),
      ...(options.timeoutMs === undefined ? {} : { fetchTimeoutMs: options.timeoutMs }),
      ...(options.maxBytes === undefined ? {} : { maxResponseBytes: options.maxBytes }),
    },
  );
}

async function reason(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof TokenRejectedError) return error.reason;
    throw error;
  }
  return 'accepted';
}

describe('JWKS cache', () => {
  it('fetches again once jwks_cache_ttl_secs has passed', async () => {
    const a = await keyPair('a');
    served = [a.jwk];
    const v = validator({ ttl: 60 });
    await v.validate(await a.sign());
    t += 59_000;
    await v.validate(await a.sign());
    expect(hits).toBe(1);
    t += 2_000;
    await v.validate(await a.sign());
    expect(hits).toBe(2);
  });

  it('stops accepting a removed key at jwks_cache_ttl_secs even when the refetch cooldown is longer', async () => {
    const a = await keyPair('a');
    const b = await keyPair('b');
    served = [a.jwk, b.jwk];
    const v = validator({ ttl: 2, cooldown: 12 });
    expect((await v.validate(await a.sign())).identity).toBe('svc');
    served = [b.jwk];
    t += 1_000;
    expect((await v.validate(await a.sign())).identity).toBe('svc');
    t += 1_500;
    expect(await reason(v.validate(await a.sign()))).toBe('unknown_key');
    expect((await v.validate(await b.sign())).identity).toBe('svc');
    expect(hits).toBe(2);
  });

  it('with a TTL shorter than the cooldown, retries a failing endpoint only once per cooldown', async () => {
    const a = await keyPair('a');
    served = [a.jwk];
    const v = validator({ ttl: 2, cooldown: 12 });
    await v.validate(await a.sign());
    mode = 'fail';
    t += 3_000;
    for (let i = 0; i < 3; i++) expect((await v.validate(await a.sign())).role).toBe('writer');
    expect(hits).toBe(2);
    t += 11_000;
    await v.validate(await a.sign());
    expect(hits).toBe(2);
    t += 1_000;
    mode = 'ok';
    await v.validate(await a.sign());
    expect(hits).toBe(3);
  });

  it('picks up a rotated key at the first token naming it, then not again before the cooldown', async () => {
    const a = await keyPair('a');
    const b = await keyPair('b');
    served = [a.jwk];
    const v = validator({ cooldown: 10 });
    await v.validate(await a.sign());
    t += 11_000;
    served = [a.jwk, b.jwk];
    expect((await v.validate(await b.sign())).identity).toBe('svc');
    expect(hits).toBe(2);
    const c = await keyPair('c');
    expect(await reason(v.validate(await c.sign()))).toBe('unknown_key');
    expect(await reason(v.validate(await c.sign()))).toBe('unknown_key');
    expect(hits).toBe(2);
    t += 11_000;
    expect(await reason(v.validate(await c.sign()))).toBe('unknown_key');
    expect(hits).toBe(3);
  });

  it('keeps the last good keys while the endpoint fails, and does not hammer it', async () => {
    const a = await keyPair('a');
    served = [a.jwk];
    const v = validator({ ttl: 60, cooldown: 10 });
    await v.validate(await a.sign());
    mode = 'fail';
    t += 61_000;
    for (let i = 0; i < 5; i++) expect((await v.validate(await a.sign())).role).toBe('writer');
    expect(hits).toBe(2);
  });

  it('answers keys_unavailable while it never had keys, at most one fetch per cooldown', async () => {
    mode = 'fail';
    const a = await keyPair('a');
    const v = validator({ cooldown: 10 });
    for (let i = 0; i < 5; i++) expect(await reason(v.validate(await a.sign()))).toBe('keys_unavailable');
    expect(hits).toBe(1);
    mode = 'ok';
    served = [a.jwk];
    t += 11_000;
    expect((await v.validate(await a.sign())).identity).toBe('svc');
  });

  it('gives up on an endpoint that answers too much, too slowly, or with a redirect', async () => {
    const a = await keyPair('a');
    served = [a.jwk];
    mode = 'huge';
    expect(await reason(validator({ maxBytes: 10_000 }).validate(await a.sign()))).toBe('keys_unavailable');
    mode = 'slow';
    const started = Date.now();
    expect(await reason(validator({ timeoutMs: 300 }).validate(await a.sign()))).toBe('keys_unavailable');
    expect(Date.now() - started).toBeLessThan(1_500);
    mode = 'redirect';
    expect(await reason(validator().validate(await a.sign()))).toBe('keys_unavailable');
  });
});
