import type { RegistryHealth, RegistrySigningKey, RegistryVersion } from '@agent-platform/contracts';
import { parseTrustedKey, sha256Tagged, verifyVersion } from '@agent-platform/registry-core';
import { openExampleArchives, type ExampleArchives } from '@agent-platform/registry-core/testing';
import { S3RVER_KEY, startS3rver, type RunningS3rver } from '@agent-platform/registry-core/testing/s3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRegistry, type TestRegistry } from './testing/test-registry.ts';

// The registry with its archives in an S3-compatible bucket (docs/registry-storage.md): a real
// registry listener (auth disabled on loopback) whose [registry.s3] names an s3rver in this
// process, spoken to through the AWS SDK as any S3 endpoint would be.
describe('the registry over S3', () => {
  let s3: RunningS3rver;
  let s3Stopped = false;
  let registry: TestRegistry;
  let examples: ExampleArchives;
  beforeAll(async () => {
    s3 = await startS3rver(['registry-archives']);
    examples = await openExampleArchives();
    registry = await startTestRegistry({
      realAuth: true,
      registry: {
        s3: {
          bucket: 'registry-archives',
          endpoint: s3.endpoint,
          region: 'eu-west-1',
          ...S3RVER_KEY,
          prefix: 'carrier-a/packages',
          path_style: true,
        },
      },
    });
  });
  afterAll(async () => {
    await registry.close();
    if (!s3Stopped) await s3.close();
    await examples.close();
  });

  const get = (path: string) => fetch(`${registry.url}${path}`);

  it('keeps a published archive in the bucket under the prefix, serves the same bytes with a signature that verifies, and reports the store in /health', async () => {
    const archive = await examples.build('loss-summary');
    const created = await fetch(`${registry.url}/packages`, {
      method: 'POST',
      headers: { 'content-type': 'application/gzip' },
      body: archive,
    });
    expect(created.status).toBe(201);
    const version = (await created.json()) as RegistryVersion;
    const digest = sha256Tagged(archive);
    expect(version).toMatchObject({ name: 'loss-summary', version: '1.0.0', archive_sha256: digest });

    // The one object, under the configured prefix (a "/" added), named by the archive's digest.
    expect(await s3.keys('registry-archives')).toEqual([
      `carrier-a/packages/loss-summary/loss-summary-1.0.0-${digest.slice('sha256:'.length)}.tar.gz`,
    ]);

    const download = await get('/packages/loss-summary/1.0.0/download');
    expect(download.status).toBe(200);
    const bytes = Buffer.from(await download.arrayBuffer());
    expect(bytes.equals(archive)).toBe(true);
    const key = (await (await get('/signing-key')).json()) as RegistrySigningKey;
    const signed = {
      name: 'loss-summary',
      version: '1.0.0',
      archive_sha256: sha256Tagged(bytes),
      content_hash: download.headers.get('x-content-hash') ?? '',
    };
    const signature = download.headers.get('x-registry-signature') ?? '';
    expect(signed.content_hash).toBe(version.content_hash);
    expect(verifyVersion(signed, signature, [parseTrustedKey(key.public_key)])?.key_id).toBe(key.key_id);

    const health = await get('/health');
    expect(health.status).toBe(200);
    expect(((await health.json()) as RegistryHealth).archives).toEqual({ status: 'ok' });
  });

  it('reports the archive store down (503) once S3 is gone, while metadata reads still answer and downloads are 502', async () => {
    await s3.close();
    s3Stopped = true;

    const health = await get('/health');
    expect(health.status).toBe(503);
    const report = (await health.json()) as RegistryHealth;
    expect(report.status).toBe('degraded');
    expect(report.archives.status).toBe('down');
    expect(report.archives.detail).toContain('s3://registry-archives/carrier-a/packages/');
    expect(report.engines.store.status).toBe('ok');
    expect(JSON.stringify(report)).not.toContain(S3RVER_KEY.secret_access_key);

    const pkg = await get('/packages/loss-summary');
    expect(pkg.status).toBe(200);
    expect(await pkg.json()).toMatchObject({ name: 'loss-summary', latest: '1.0.0', versions: ['1.0.0'] });
    expect((await get('/packages/loss-summary/1.0.0')).status).toBe(200);
    expect((await get('/search?q=loss')).status).toBe(200);
    // A download needs the bucket: 502 (an upstream error), naming the store, never the secret.
    const download = await get('/packages/loss-summary/1.0.0/download');
    expect(download.status).toBe(502);
    const body = (await download.json()) as { error: { category: string; message: string } };
    expect(body.error.category).toBe('ProviderError');
    expect(body.error.message).toMatch(/the archive store did not answer for loss-summary@1\.0\.0/);
    expect(JSON.stringify(body)).not.toContain(S3RVER_KEY.secret_access_key);

    // A publish needs the bucket too: 502 naming the archive store (not "internal error"), and
    // nothing recorded, so the publisher can send it again once the bucket is back.
    const published = await fetch(`${registry.url}/packages`, {
      method: 'POST',
      headers: { 'content-type': 'application/gzip' },
      body: await examples.build('fnol-triage'),
    });
    const refused = (await published.json()) as { error: { category: string; message: string } };
    expect(published.status, JSON.stringify(refused)).toBe(502);
    expect(refused.error.category).toBe('ProviderError');
    expect(refused.error.message).toMatch(/^the archive store did not take the archive of fnol-triage@\S+: S3 put of s3:\/\/registry-archives\/carrier-a\/packages\/fnol-triage\//);
    expect(JSON.stringify(refused)).not.toContain(S3RVER_KEY.secret_access_key);
    expect((await get('/packages/fnol-triage')).status).toBe(404);
    expect((await get('/packages/fnol-triage/1.0.0')).status).toBe(404);
  });
});
