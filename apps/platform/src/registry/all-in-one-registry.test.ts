import { Subjects, type RevocationFeed } from '@agent-platform/contracts';
import {
  parseTrustedKey,
  REGISTRY_COLLECTIONS,
  verifyRevocationFeed,
  type RegistryPackageRecord,
} from '@agent-platform/registry-core';
import { waitUntil } from '@agent-platform/testkit';
import { openExampleArchives, type ExampleArchives } from '@agent-platform/registry-core/testing';
import type { RegistryService } from '@agent-platform/registry';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startPlatformTestApi, type PlatformTestApi } from '../testing/platform-test-api.ts';

// DECISIONS D1/D2: `[surfaces] registry = true` serves the package registry on `[registry] listen`
// from the all-in-one process, over the platform's own engines (one store, one bus).
describe('the all-in-one with [surfaces] registry', () => {
  let examples: ExampleArchives;
  let api: PlatformTestApi | null = null;
  beforeAll(async () => {
    examples = await openExampleArchives();
  });
  afterAll(async () => examples.close());
  afterEach(async () => {
    await api?.close();
    api = null;
  });

  const registryOf = (platform: PlatformTestApi) =>
    platform.services().find((s): s is RegistryService => s.name === 'registry') ?? null;

  it('serves the registry on its own listener, storing in the platform store', async () => {
    api = await startPlatformTestApi({
      listen: true,
      config: { surfaces: { registry: true }, registry: { listen: '127.0.0.1:0' } },
    });
    const url = registryOf(api)?.address;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(url).not.toBe(api.url);

    const health = await fetch(`${url}/health`);
    expect(await health.json()).toMatchObject({ status: 'ok', archives: { status: 'ok' } });
    const archive = await examples.build('loss-summary');
    const published = await fetch(`${url}/packages`, {
      method: 'POST',
      headers: { 'content-type': 'application/gzip' },
      body: archive,
    });
    expect(published.status).toBe(201);
    expect(await (await fetch(`${url}/packages/loss-summary`)).json()).toMatchObject({
      name: 'loss-summary',
      latest: '1.0.0',
    });
    // The same store as the api's: the registry is part of this process, not a second platform.
    const record = await api.deps.store
      .collection<RegistryPackageRecord>(REGISTRY_COLLECTIONS.packages)
      .get('loss-summary');
    expect(record?.doc.owners).toEqual(['anonymous']);
    // A security yank reaches this platform's own bus (platform-side revocation listens there).
    const pushed: RevocationFeed[] = [];
    await api.deps.bus.listen<RevocationFeed>(Subjects.registryRevocations, (feed) => pushed.push(feed));
    const yank = await fetch(`${url}/packages/loss-summary/1.0.0/yank`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'leaks claim data', security: true }),
    });
    expect(yank.status).toBe(200);
    await waitUntil(() => pushed.length === 1, {
      timeoutMs: 5000,
      message: 'the revocation feed on the bus',
    });
    const key = parseTrustedKey(
      ((await (await fetch(`${url}/signing-key`)).json()) as { public_key: string }).public_key,
    );
    const { payload } = await verifyRevocationFeed(pushed[0]!.feed, [key]);
    expect(payload.revocations).toEqual([
      expect.objectContaining({ seq: 1, name: 'loss-summary', version: '1.0.0', reason: 'leaks claim data' }),
    ]);
    // The api listener does not serve registry routes.
    expect((await fetch(`${api.url}/packages/loss-summary`)).status).not.toBe(200);
  });

  it('does not start a registry unless asked', async () => {
    api = await startPlatformTestApi({ listen: true });
    expect(registryOf(api)).toBeNull();
  });
});
