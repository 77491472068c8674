import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { openCheckpointSink } from './open-checkpoint-sink.ts';

let server: Server | null = null;
afterEach(async () => {
  await new Promise((r) => server?.close(r) ?? r(undefined));
  server = null;
});

const BASE = { sink: '', interval_secs: 3600, signing_key_file: '', object_lock_days: 0 };
const S3 = { bucket: 'anchor', region: 'us-east-1', access_key_id: 'k', secret_access_key: 's', prefix: '', path_style: true };

/** An S3 stand-in that records each request's method, path and headers and answers 200. */
async function recordingS3(): Promise<{ endpoint: string; seen: Array<{ method: string; url: string; headers: IncomingHttpHeaders }> }> {
  const seen: Array<{ method: string; url: string; headers: IncomingHttpHeaders }> = [];
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
      res.writeHead(200, { ETag: '"0"' }).end();
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

describe('openCheckpointSink', () => {
  it('is off for an empty sink and no s3 table', () => {
    expect(openCheckpointSink(BASE, () => new Date())).toBeNull();
  });

  it('puts each S3 checkpoint with COMPLIANCE retention of object_lock_days and a SHA-256 checksum', async () => {
    const s3 = await recordingS3();
    const now = new Date('2026-11-25T12:00:00.000Z');
    const sink = openCheckpointSink({ ...BASE, object_lock_days: 30, s3: { ...S3, endpoint: s3.endpoint } }, () => now)!;
    await sink.write('checkpoints/a.json', Buffer.from('{}'));
    await sink.close();
    expect(s3.seen.map((r) => `${r.method} ${r.url.split('?')[0]}`)).toEqual(['PUT /anchor/checkpoints/a.json', 'PUT /anchor/latest.json']);
    for (const { headers } of s3.seen) {
      expect(headers['x-amz-object-lock-mode']).toBe('COMPLIANCE');
      expect(new Date(String(headers['x-amz-object-lock-retain-until-date'])).toISOString()).toBe('2026-12-25T12:00:00.000Z');
      expect(headers['x-amz-checksum-sha256'] ?? headers['x-amz-sdk-checksum-algorithm']).toBeTruthy();
      expect(headers['content-type']).toBe('application/json');
    }
  });

  it('sends no object-lock headers without object_lock_days', async () => {
    const s3 = await recordingS3();
    const sink = openCheckpointSink({ ...BASE, s3: { ...S3, endpoint: s3.endpoint } }, () => new Date())!;
    await sink.write('checkpoints/b.json', Buffer.from('{}'));
    await sink.close();
    expect(s3.seen).toHaveLength(2);
    expect(s3.seen[0]!.headers['x-amz-object-lock-mode']).toBeUndefined();
  });
});
