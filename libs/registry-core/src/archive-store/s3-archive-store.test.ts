import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openS3ArchiveStore, type RegistryS3Settings } from './s3-archive-store.ts';
import { archiveStoreConformance, binaryBytes } from './testing/archive-store-conformance.ts';
import { S3RVER_KEY, startS3rver, type RunningS3rver } from './testing/s3rver-harness.ts';

let server: RunningS3rver;
beforeAll(async () => {
  server = await startS3rver(['archives', 'other']);
});
afterAll(async () => {
  await server.close();
});

const settings = (overrides: Partial<RegistryS3Settings> = {}): RegistryS3Settings => ({
  bucket: 'archives',
  endpoint: server.endpoint,
  region: 'us-east-1',
  ...S3RVER_KEY,
  prefix: '',
  path_style: true,
  ...overrides,
});

/** Every key of `bucket` (through a separate client), sorted. */
const keysOf = (bucket: string): Promise<string[]> => server.keys(bucket);

async function emptyBucket(bucket: string): Promise<void> {
  const store = openS3ArchiveStore(settings({ bucket }));
  for (const key of await keysOf(bucket)) await store.delete(key);
  await store.close();
}

let run = 0;
archiveStoreConformance('s3 (s3rver, path-style, with a prefix)', async () => {
  // A prefix of its own per test, in a bucket that also holds other data: the suite's object
  // listing sees only this test's objects, named with the prefix.
  const prefix = `registry/run-${++run}/`;
  await emptyBucket('archives');
  await openS3ArchiveStore(settings()).put('unrelated/data.bin', binaryBytes(8));
  return {
    store: openS3ArchiveStore(settings({ prefix })),
    objects: async () => (await keysOf('archives')).filter((key) => key !== 'unrelated/data.bin'),
    objectName: (key) => prefix + key,
    cleanup: () => emptyBucket('archives'),
  };
});

describe('s3 archive store', () => {
  it('puts objects under the prefix, adding the "/" it lacks, and reads them back through it', async () => {
    await emptyBucket('other');
    const store = openS3ArchiveStore(settings({ bucket: 'other', prefix: 'team-a/archives' }));
    await store.put('pkg/pkg-1.0.0.tar.gz', binaryBytes(100));
    expect(await keysOf('other')).toEqual(['team-a/archives/pkg/pkg-1.0.0.tar.gz']);
    const unprefixed = openS3ArchiveStore(settings({ bucket: 'other' }));
    expect(await unprefixed.get('pkg/pkg-1.0.0.tar.gz')).toBeNull();
    expect(await unprefixed.get('team-a/archives/pkg/pkg-1.0.0.tar.gz')).not.toBeNull();
    await store.delete('pkg/pkg-1.0.0.tar.gz');
    expect(await keysOf('other')).toEqual([]);
    await store.close();
    await unprefixed.close();
  });

  it('refuses a put with a wrong secret at once, with a clear error that does not show the secret', async () => {
    const secret = 'wrong-secret-0123456789';
    const store = openS3ArchiveStore(settings({ secret_access_key: secret }));
    const started = Date.now();
    const error = await store.put('pkg/pkg-1.0.0.tar.gz', binaryBytes(10)).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(error?.message).toMatch(
      /^S3 put of s3:\/\/archives\/pkg\/pkg-1\.0\.0\.tar\.gz failed: SignatureDoesNotMatch \(HTTP 403\)/,
    );
    expect(error?.message).toContain('check [registry.s3] access_key_id and secret_access_key');
    expect(error?.message).not.toContain(secret);
    expect(await keysOf('archives')).not.toContain('pkg/pkg-1.0.0.tar.gz');
    const health = await store.health();
    expect(health.status).toBe('down');
    expect(health.detail).not.toContain(secret);
    await store.close();
  });

  it('uses the SDK default credential chain (here the environment) when access_key_id is empty', async () => {
    const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
    try {
      process.env.AWS_ACCESS_KEY_ID = S3RVER_KEY.access_key_id;
      process.env.AWS_SECRET_ACCESS_KEY = S3RVER_KEY.secret_access_key;
      const store = openS3ArchiveStore(settings({ access_key_id: '', secret_access_key: '' }));
      await store.put('env/env-1.0.0.tar.gz', binaryBytes(10));
      expect(await store.get('env/env-1.0.0.tar.gz')).toEqual(binaryBytes(10));
      await store.delete('env/env-1.0.0.tar.gz');
      await store.close();
      process.env.AWS_SECRET_ACCESS_KEY = 'not-the-secret';
      const wrong = openS3ArchiveStore(settings({ access_key_id: '', secret_access_key: '' }));
      await expect(wrong.put('env/env-1.0.0.tar.gz', binaryBytes(10))).rejects.toThrow(
        /SignatureDoesNotMatch/,
      );
      await wrong.close();
    } finally {
      for (const [name, value] of [
        ['AWS_ACCESS_KEY_ID', saved.id],
        ['AWS_SECRET_ACCESS_KEY', saved.secret],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it('refuses an unknown access key id with a clear error', async () => {
    const store = openS3ArchiveStore(settings({ access_key_id: 'NOT-A-KEY' }));
    await expect(store.get('pkg/pkg-1.0.0.tar.gz')).rejects.toThrow(
      /failed: InvalidAccessKeyId \(HTTP 403\).*access_key_id/,
    );
    await store.close();
  });

  it('names a missing bucket, and reports down for it', async () => {
    const store = openS3ArchiveStore(settings({ bucket: 'no-such-bucket' }));
    await expect(store.put('pkg/pkg-1.0.0.tar.gz', binaryBytes(10))).rejects.toThrow(
      /S3 put of s3:\/\/no-such-bucket\/pkg\/pkg-1\.0\.0\.tar\.gz failed: NoSuchBucket \(HTTP 404\).*check \[registry\.s3\] bucket/,
    );
    expect(await store.health()).toEqual({
      status: 'down',
      detail: expect.stringContaining('s3://no-such-bucket/'),
    });
    await store.close();
  });

  describe('against an endpoint that never answers', () => {
    let silent: Server;
    const sockets: Socket[] = [];
    let endpoint: string;
    beforeAll(async () => {
      silent = createServer((socket) => sockets.push(socket));
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      const address = silent.address();
      if (address === null || typeof address === 'string') throw new Error('no port');
      endpoint = `http://127.0.0.1:${address.port}`;
    });
    afterAll(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    });

    it('fails each call after the request timeout instead of hanging', async () => {
      const store = openS3ArchiveStore(settings({ endpoint }), { requestTimeoutMs: 400 });
      const started = Date.now();
      await expect(store.put('pkg/pkg-1.0.0.tar.gz', binaryBytes(10))).rejects.toThrow(
        /S3 put of s3:\/\/archives\/pkg\/pkg-1\.0\.0\.tar\.gz failed: no answer within 400 ms/,
      );
      await expect(store.get('pkg/pkg-1.0.0.tar.gz')).rejects.toThrow(/no answer within 400 ms/);
      expect(await store.health()).toEqual({
        status: 'down',
        detail: expect.stringContaining('no answer within 400 ms'),
      });
      expect(Date.now() - started).toBeLessThan(4_000);
      await store.close();
    });
  });
});
