import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fetchJson, type FetchLimits } from './bounded-fetch.ts';
import { discoverJwksUri } from './discovery.ts';

// A real issuer on loopback serving its discovery document: loopback is a private target
// (DECISIONS D9), so it is reached only when private targets are allowed.
let server: Server;
let issuer: string;
let hits: number;

beforeEach(async () => {
  hits = 0;
  server = createServer((_request, response) => {
    hits += 1;
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks` }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const limits = (allowPrivate: boolean): FetchLimits => ({ timeoutMs: 2_000, maxBytes: 10_000, allowPrivateTargets: () => allowPrivate });

describe('discovery and JWKS requests go through the private-target guard (D9)', () => {
  it('refuses an issuer on a private address unless private targets are allowed', async () => {
    await expect(discoverJwksUri(issuer, limits(false))).rejects.toThrow(/private address 127\.0\.0\.1.*allow_private_targets/);
    expect(hits).toBe(0);
    await expect(discoverJwksUri(issuer, limits(true))).resolves.toBe(`${issuer}/jwks`);
    expect(hits).toBe(1);
  });

  it('refuses link-local (cloud metadata) and unique-local addresses before connecting', async () => {
    const started = Date.now();
    await expect(fetchJson('https://169.254.169.254/.well-known/openid-configuration', limits(false))).rejects.toThrow(/169\.254\.169\.254.*allow_private_targets/);
    await expect(fetchJson('https://[fd00::1]/jwks', limits(false))).rejects.toThrow(/allow_private_targets/);
    await expect(fetchJson('http://localhost:9/jwks', limits(false))).rejects.toThrow(/allow_private_targets/);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
