import { generateKeyPairSync } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Subjects } from '@agent-platform/contracts';
import { createSigner, signRevocationFeed, type RegistrySigner } from '@agent-platform/registry-core';
import { waitUntil } from '@agent-platform/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startRevocationFeedServer, startTestApi, type RevocationFeedServer, type TestApi } from '../testing/index.ts';
import { composeRevocationWatcher } from './compose-revocation-watcher.ts';
import type { RevocationWatcher } from './revocation-watcher.ts';

// The watcher in the api process over the embedded engines, against a registry stand-in on
// loopback that serves a feed signed with a real Ed25519 key.
const example = (name: string) => fileURLToPath(new URL(`../../../../examples/${name}`, import.meta.url));
const TOKEN = 'reg_sk_watcher_test_token';
const ENV = { REGISTRY_TOKEN: TOKEN };

let signer: RegistrySigner;
let registry: RevocationFeedServer;
let api: TestApi | null = null;
let watcher: RevocationWatcher | null = null;

beforeEach(async () => {
  signer = createSigner(generateKeyPairSync('ed25519').privateKey);
  registry = await startRevocationFeedServer(signer);
});
afterEach(async () => {
  await api?.close();
  api = null;
  watcher = null;
  await registry.close();
});

async function start(pollSecs: number, catalog: Record<string, unknown> = {}): Promise<TestApi> {
  api = await startTestApi({
    listen: false,
    env: ENV,
    config: { catalog: { registry_url: registry.url, trusted_keys: [signer.publicKey.public_key], revocation_poll_secs: pollSecs, registry_key_env: 'REGISTRY_TOKEN', ...catalog } },
    services: (deps) => [(watcher = composeRevocationWatcher(deps, ENV))],
  });
  return api;
}

async function installRunning(t: TestApi, name: string): Promise<string> {
  const res = await t.request('POST', '/catalog/install', { body: { path: example(name), activate: true } });
  expect(res.status).toBe(201);
  return res.body.installed.at(-1).id as string;
}

const stateOf = async (t: TestApi, id: string) => (await t.deps.agents.get(id))?.state;
const revokedEntries = async (t: TestApi) => (await t.deps.audit.query({ limit: 100, category: 'agents' })).filter((e) => e.action === 'package.revoked');
/** The feed read up to `seq`: every entry before it applied, audited and emitted. */
const readUpTo = (t: TestApi, seq: number) =>
  waitUntil(async () => (await t.deps.revocations.cursor([signer.publicKey.key_id])) === seq, { timeoutMs: 4_000, message: `the cursor at ${seq}` });
const warned = (t: TestApi, text: string) => t.logs().some((line) => line.includes('"level":40') && line.includes(text));

describe('the revocation watcher', () => {
  it('picks up a new revocation by polling within one interval, with the registry bearer', async () => {
    const t = await start(1);
    const agent = await installRunning(t, 'claims-intake');
    await waitUntil(() => registry.requests.length >= 1, { message: 'the first poll' });
    registry.revoke('fnol-triage', '1.0.0');
    const published = Date.now();
    // One interval (1 s) plus the work, with room for a loaded machine: far below the 3600 s a
    // missed poll would take in the push tests below.
    await waitUntil(async () => (await stateOf(t, agent)) === 'Suspended', { timeoutMs: 4_000, message: 'the agent suspended by the next poll' });
    expect(Date.now() - published).toBeLessThan(4_000);
    await readUpTo(t, 1);

    const installed = await t.request('GET', '/catalog/installed');
    expect(installed.body.packages.find((p: { name: string }) => p.name === 'fnol-triage')).toMatchObject({ revoked: true, revocation: { seq: 1, override: null } });
    expect(await revokedEntries(t)).toHaveLength(1);
    expect(registry.authorizations.every((a) => a === `Bearer ${TOKEN}`)).toBe(true);
    expect(t.logs().join('\n')).not.toContain(TOKEN);
  });

  it('applies a feed pushed on the bus without waiting for the poll, and fills a gap in a push at once', async () => {
    const t = await start(3600);
    const intake = await installRunning(t, 'claims-intake');
    const policy = await installRunning(t, 'policy-servicing');
    await waitUntil(() => registry.requests.length === 1, { message: 'the first poll' });

    registry.revoke('claims-intake', '1.0.0');
    await t.deps.bus.notify(Subjects.registryRevocations, { feed: await registry.feed(0) });
    await waitUntil(async () => (await stateOf(t, intake)) === 'Suspended', { timeoutMs: 4_000, message: 'the pushed revocation applied' });
    expect(registry.requests).toEqual([0]);

    // A push carrying seq 3 only, while this platform is at seq 1: seq 3 at once, seq 2 by the poll it triggers.
    registry.revoke('policy-servicing', '1.0.0');
    registry.revoke('loss-summary', '1.0.0');
    await t.deps.bus.notify(Subjects.registryRevocations, { feed: await registry.feed(2) });
    await waitUntil(async () => (await stateOf(t, policy)) === 'Suspended', { timeoutMs: 4_000, message: 'the gap filled by an immediate poll' });
    await readUpTo(t, 3);
    expect(registry.requests).toEqual([0, 1]);
    expect((await revokedEntries(t)).map((e) => e.target).sort()).toEqual(['claims-intake@1.0.0', 'loss-summary@1.0.0', 'policy-servicing@1.0.0']);
  });

  it('applies a revocation once when two watchers (two api nodes) see it at the same time', async () => {
    const watchers: RevocationWatcher[] = [];
    const t = (api = await startTestApi({
      listen: false,
      env: ENV,
      config: { catalog: { registry_url: registry.url, trusted_keys: [signer.publicKey.public_key], revocation_poll_secs: 3600 } },
      services: (deps) => [0, 1].map(() => composeRevocationWatcher(deps, ENV)).map((w) => (watchers.push(w), w)),
    }));
    const agent = await installRunning(t, 'claims-intake');
    await waitUntil(() => registry.requests.length === 2, { message: 'the first poll of each watcher' });
    registry.revoke('claims-intake', '1.0.0');
    await Promise.all([t.deps.bus.notify(Subjects.registryRevocations, { feed: await registry.feed(0) }), ...watchers.map((w) => w.pollNow())]);
    await readUpTo(t, 1);
    expect(await stateOf(t, agent)).toBe('Suspended');
    expect(await revokedEntries(t)).toHaveLength(1);
  });

  it('ignores a feed signed by an untrusted key or tampered with, and logs a warning', async () => {
    const t = await start(3600);
    const agent = await installRunning(t, 'claims-intake');
    registry.revoke('claims-intake', '1.0.0');
    const stranger = createSigner(generateKeyPairSync('ed25519').privateKey);

    registry.serveInstead((_jws, since) => registry.feed(since, stranger));
    await watcher!.pollNow();
    expect(warned(t, 'not in [catalog] trusted_keys')).toBe(true);

    registry.serveInstead(async (jws) => {
      const [header, payload, signature] = jws.split('.') as [string, string, string];
      const changed = JSON.parse(Buffer.from(payload, 'base64url').toString()) as { revocations: Array<{ version: string }> };
      changed.revocations[0]!.version = '9.9.9';
      return `${header}.${Buffer.from(JSON.stringify(changed)).toString('base64url')}.${signature}`;
    });
    await watcher!.pollNow();
    expect(warned(t, 'signature does not verify')).toBe(true);

    const forged = await signRevocationFeed(stranger, { since: 0, latest_seq: 1, revocations: [{ seq: 1, name: 'claims-intake', version: '1.0.0', reason: 'forged', revoked_at: new Date().toISOString() }] }, new Date());
    await t.deps.bus.notify(Subjects.registryRevocations, { feed: forged });
    await waitUntil(() => t.logs().filter((line) => line.includes('"via":"push"')).length === 1, { message: 'the push rejected' });

    expect(await stateOf(t, agent)).toBe('Running');
    expect(await revokedEntries(t)).toEqual([]);
    expect((await t.request('GET', '/catalog/installed')).body.packages.every((p: { revoked: boolean }) => !p.revoked)).toBe(true);
    expect(await t.deps.revocations.cursor([signer.publicKey.key_id])).toBe(0);

    // The genuine feed is applied: what was ignored was ignored for its signature alone.
    registry.serveInstead(null);
    await watcher!.pollNow();
    expect(await stateOf(t, agent)).toBe('Suspended');
  });

  it('keeps its cursor across a restart: nothing is applied or audited again', async () => {
    const t = await start(3600);
    const agent = await installRunning(t, 'claims-intake');
    registry.revoke('claims-intake', '1.0.0');
    await watcher!.pollNow();
    expect(await stateOf(t, agent)).toBe('Suspended');
    expect((await t.request('POST', '/catalog/installed/claims-intake/override-revocation', { body: { reason: 'patched in place, vendor advisory 7' } })).status).toBe(200);
    expect((await t.request('POST', `/agents/${agent}/activate`)).status).toBe(200);

    const before = registry.requests.length;
    await t.restart();
    await waitUntil(() => registry.requests.length > before, { message: 'the first poll after the restart' });
    await watcher!.pollNow();
    expect(registry.requests.slice(before)).toEqual([1, 1]);
    expect(await stateOf(t, agent)).toBe('Running');
    expect(await revokedEntries(t)).toHaveLength(1);
  });

  it('does nothing without a registry_url or trusted keys, and says so once', async () => {
    const t = await start(1, { trusted_keys: [] });
    registry.revoke('claims-intake', '1.0.0');
    const agent = await installRunning(t, 'claims-intake');
    await t.deps.bus.notify(Subjects.registryRevocations, { feed: await registry.feed(0) });
    await watcher!.pollNow();
    expect(t.logs().filter((line) => line.includes('revocations are not watched'))).toHaveLength(1);
    expect(registry.requests).toEqual([]);
    expect(await stateOf(t, agent)).toBe('Running');
  });
});
