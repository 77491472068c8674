import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openArchiveStore } from './open-archive-store.ts';
import { binaryBytes } from './testing/archive-store-conformance.ts';
import { S3RVER_KEY, startS3rver, type RunningS3rver } from './testing/s3rver-harness.ts';

let dir: string;
let server: RunningS3rver;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-open-archives-'));
  server = await startS3rver(['archives']);
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

const files = async (root: string) => (await readdir(root, { recursive: true })).sort();

describe('openArchiveStore', () => {
  it('keeps archives under <data_dir>/registry/archives when archive_dir is empty', async () => {
    const dataDir = join(dir, 'data');
    const store = openArchiveStore({ archive_dir: '' }, dataDir);
    await store.put('pkg/pkg-1.0.0.tar.gz', binaryBytes(10));
    expect(await files(join(dataDir, 'registry', 'archives'))).toEqual(['pkg', 'pkg/pkg-1.0.0.tar.gz']);
  });

  it('keeps archives under archive_dir when it is set', async () => {
    const archiveDir = join(dir, 'elsewhere');
    const store = openArchiveStore({ archive_dir: archiveDir }, join(dir, 'unused-data'));
    await store.put('pkg/pkg-1.0.0.tar.gz', binaryBytes(10));
    expect(await files(archiveDir)).toEqual(['pkg', 'pkg/pkg-1.0.0.tar.gz']);
    expect(await readdir(dir)).not.toContain('unused-data');
  });

  it('uses the bucket of [registry.s3] when that table is present, whatever archive_dir says', async () => {
    const archiveDir = join(dir, 'not-used');
    const store = openArchiveStore(
      {
        archive_dir: archiveDir,
        s3: {
          bucket: 'archives',
          endpoint: server.endpoint,
          region: 'eu-west-1',
          ...S3RVER_KEY,
          prefix: 'reg',
          path_style: true,
        },
      },
      join(dir, 'data'),
    );
    await store.put('pkg/pkg-1.0.0.tar.gz', binaryBytes(10));
    expect(await store.health()).toEqual({ status: 'ok' });
    const admin = new S3Client({
      region: 'us-east-1',
      endpoint: server.endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: S3RVER_KEY.access_key_id, secretAccessKey: S3RVER_KEY.secret_access_key },
    });
    const listed = await admin.send(new ListObjectsV2Command({ Bucket: 'archives' }));
    expect(listed.Contents?.map((object) => object.Key)).toEqual(['reg/pkg/pkg-1.0.0.tar.gz']);
    expect(await readdir(dir)).not.toContain('not-used');
    admin.destroy();
    await store.close();
  });
});
