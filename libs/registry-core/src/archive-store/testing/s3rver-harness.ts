import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { sigV4Fault } from './sigv4-check.ts';

/** The one key pair the server accepts (s3rver's own account). */
export const S3RVER_KEY = { access_key_id: 'S3RVER', secret_access_key: 'S3RVER' } as const;

export interface RunningS3rver {
  /** `http://127.0.0.1:<port>`: use with path-style addressing. */
  endpoint: string;
  /** Buckets made at start. */
  buckets: string[];
  /** Every object key of `bucket`, sorted (read through a client of its own). */
  keys(bucket: string): Promise<string[]>;
  close(): Promise<void>;
}

export interface S3rverOptions {
  /**
   * Awaited before each request is handled (after its signature is checked): a test holds a
   * request here (e.g. one PUT) to act while a client waits on it, such as SIGKILL the client.
   */
  gate?: (req: IncomingMessage) => Promise<void> | void;
}

/**
 * An S3-compatible server in this process: s3rver (from npm) behind a Signature V4 check, which
 * s3rver lacks, so a wrong secret is refused as S3 refuses it (403 SignatureDoesNotMatch). It
 * listens on a free loopback port, holds `buckets`, and keeps its objects in a temporary
 * directory removed at close.
 */
export async function startS3rver(buckets: string[] = ['archives'], options: S3rverOptions = {}): Promise<RunningS3rver> {
  const directory = await mkdtemp(join(tmpdir(), 'ap-s3rver-'));
  const s3rver = new S3rver({
    silent: true,
    directory,
    vhostBuckets: false,
    configureBuckets: buckets.map((name) => ({ name })),
  });
  await s3rver.configureBuckets();
  const handle = s3rver.callback();
  const secrets = new Map([[S3RVER_KEY.access_key_id, S3RVER_KEY.secret_access_key]]);
  const server = createServer((req, res) => {
    const fault = sigV4Fault(req, secrets);
    if (fault === undefined) {
      if (options.gate === undefined) return handle(req, res);
      return void Promise.resolve(options.gate(req)).then(
        () => (req.destroyed ? undefined : handle(req, res)),
        () => res.destroy(),
      );
    }
    req.resume();
    res.writeHead(403, { 'content-type': 'application/xml' });
    res.end(
      `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${fault}</Code><Message>The request signature we calculated does not match the signature you provided. Check your key and signing method.</Message><RequestId>0</RequestId></Error>`,
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const admin = new S3Client({
    region: 'us-east-1',
    endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: S3RVER_KEY.access_key_id, secretAccessKey: S3RVER_KEY.secret_access_key },
  });
  return {
    endpoint,
    buckets,
    async keys(bucket) {
      const answer = await admin.send(new ListObjectsV2Command({ Bucket: bucket }));
      return (answer.Contents ?? []).map((object) => object.Key ?? '').sort();
    },
    async close() {
      admin.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(directory, { recursive: true, force: true });
    },
  };
}
