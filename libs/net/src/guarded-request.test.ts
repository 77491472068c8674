import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { startWebhookReceiver, type WebhookReceiver } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendGuarded, type GuardedRequestOptions } from './guarded-request.ts';
import { isPrivateAddress } from './private-target.ts';

// DECISIONS D9 at the socket: an SSRF corpus aimed at a canary listener on 127.0.0.1 that must
// receive nothing, and the bounds on time and size of one exchange.
let canary: WebhookReceiver;
beforeAll(async () => {
  canary = await startWebhookReceiver();
});
afterAll(async () => {
  await canary.close();
});

const strict: GuardedRequestOptions = { allowPrivate: false, timeoutMs: 2_000, maxResponseBytes: 1024 };
const post = (url: string, options: GuardedRequestOptions = strict) =>
  sendGuarded({ url, method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }, options);

describe('the SSRF corpus with allow_private_targets = false', () => {
  const corpus = (p: number) => [
    `http://127.0.0.1:${p}/`,
    `http://localhost:${p}/`,
    `http://localhost.:${p}/`,
    `http://hooks.localhost:${p}/`,
    `http://[::1]:${p}/`,
    `http://[::ffff:127.0.0.1]:${p}/`,
    `http://[::127.0.0.1]:${p}/`,
    `http://2130706433:${p}/`,
    `http://0177.0.0.1:${p}/`,
    `http://0x7f.0.0.1:${p}/`,
    `http://127.1:${p}/`,
    `http://0.0.0.0:${p}/`,
    'http://10.0.0.1/',
    'http://192.168.1.1/',
    'http://169.254.169.254/latest/meta-data/',
    'http://[fe80::1]/',
    'http://[fd00::1]/',
  ];

  it('refuses every target before connecting, and the canary receives nothing', async () => {
    for (const url of corpus(canary.port)) await expect(post(url), url).rejects.toThrow(/allow_private_targets/);
    expect(canary.requests).toEqual([]);
  });

  it('refuses a name resolving to loopback, or to any private address among public ones', async () => {
    const resolve = async (name: string) =>
      name === 'canary.example.com' ? [{ address: '127.0.0.1' }] : [{ address: '93.184.216.34' }, { address: '10.1.2.3' }];
    await expect(post(`http://canary.example.com:${canary.port}/`, { ...strict, resolve })).rejects.toThrow(/127\.0\.0\.1.*allow_private_targets/);
    await expect(post(`http://mixed.example.com:${canary.port}/`, { ...strict, resolve })).rejects.toThrow(/10\.1\.2\.3/);
    expect(canary.requests).toEqual([]);
  });

  it('does not follow a redirect from a public peer to the canary (no DNS rebinding either: it connects to the address it checked)', async () => {
    // 127.0.0.2 plays a public address: the predicate says so, honestly limited to that one address.
    const isPrivate = (address: string) => address !== '127.0.0.2' && isPrivateAddress(address);
    const redirector = await startWebhookReceiver(() => ({ status: 302, headers: { location: `${canary.url}/stolen` } }), '127.0.0.2');
    try {
      // The name resolves to the "public" address; the socket goes there, never re-resolved.
      const resolve = async () => [{ address: '127.0.0.2' }];
      const response = await post(`http://public.example.com:${redirector.port}/hook`, { ...strict, isPrivate, resolve });
      expect(response.status).toBe(302);
      expect(response.remote_address).toBe('127.0.0.2');
      expect(redirector.requests).toHaveLength(1);
      expect(redirector.requests[0]?.headers.host).toBe(`public.example.com:${redirector.port}`);
      expect(canary.requests).toEqual([]);
    } finally {
      await redirector.close();
    }
  });

  it('reaches a loopback receiver once allow_private_targets is true', async () => {
    const response = await post(`${canary.url}/ok`, { ...strict, allowPrivate: true });
    expect(response.status).toBe(200);
    expect(canary.requests.map((r) => r.path)).toEqual(['/ok']);
    canary.requests.length = 0;
  });
});

describe('bounds', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/big') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(Buffer.alloc(1024 * 1024, 'x'));
      } else if (req.url === '/drip') {
        res.writeHead(200);
        res.write('a'); // then nothing: the answer never completes
      }
      // '/hang': never answers
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const loose = { ...strict, allowPrivate: true, timeoutMs: 300 };

  it('reads at most max_response_bytes of the answer', async () => {
    const response = await post(`${base}/big`, loose);
    expect(response.body.length).toBe(1024);
    expect(response.truncated).toBe(true);
  });

  it('gives up after timeout_ms on a peer that never answers, or never finishes answering', async () => {
    for (const path of ['/hang', '/drip']) {
      const started = Date.now();
      await expect(post(`${base}${path}`, loose)).rejects.toThrow(/within 300 ms/);
      expect(Date.now() - started).toBeLessThan(2_000);
    }
  });

  it('gives up after timeout_ms on an https peer that never finishes the TLS handshake', async () => {
    const sockets: Socket[] = [];
    const silent = createTcpServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const started = Date.now();
      await expect(post(`https://127.0.0.1:${(silent.address() as AddressInfo).port}/`, loose)).rejects.toThrow(/within 300 ms/);
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('refuses URLs that are not http(s)', async () => {
    await expect(post('file:///etc/passwd', loose)).rejects.toThrow(/http or https/);
  });
});
