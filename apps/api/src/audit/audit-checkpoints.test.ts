import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Streams, type PlatformConfig, type PlatformEvent } from '@agent-platform/contracts';
import { watchAllEvents } from '@agent-platform/domain/testing';
import { waitUntil } from '@agent-platform/testkit';
import { S3RVER_KEY, startS3rver, type RunningS3rver } from '@agent-platform/registry-core/testing/s3rver';
import { startTestApi, type DeepPartial, type TestApi } from '../testing/index.ts';
import { composeCheckpointScheduler } from './checkpoint-scheduler.ts';

interface RawDb {
  prepare(sql: string): { run(...p: unknown[]): unknown };
  close(): void;
}
const Database = createRequire(import.meta.url)('better-sqlite3') as new (path: string) => RawDb;

const apis: TestApi[] = [];
const scratch: string[] = [];
let s3: RunningS3rver | null = null;

afterEach(async () => {
  for (const api of apis.splice(0)) await api.close();
  await s3?.close();
  s3 = null;
  for (const dir of scratch.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function tempDir(tag: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `ap-ckpt-${tag}-`));
  scratch.push(dir);
  return dir;
}

async function start(config: DeepPartial<PlatformConfig>, extra: Parameters<typeof startTestApi>[0] = {}): Promise<TestApi> {
  const api = await startTestApi({ ...extra, config: { auth: { mode: 'local' }, ...config } });
  apis.push(api);
  return api;
}

async function appendEvents(t: TestApi, token: string, n: number): Promise<void> {
  for (let i = 0; i < n; i += 1) {
    const res = await t.request('POST', '/audit/append', { token, body: { event_type: `event-${i}` } });
    expect(res.status).toBe(201);
  }
}

function dbPath(t: TestApi): string {
  return join(t.dataDir, 'data', 'platform.db');
}

describe('audit checkpoints in a directory', () => {
  it('writes a signed checkpoint on demand, lists it, and verify checks the chain against it', async () => {
    const sink = await tempDir('dir');
    const t = await start({ audit: { checkpoints: { sink } } });
    const admin = await t.issueKey('admin', 'root');
    await appendEvents(t, admin, 2);

    const written = await t.request('POST', '/security/checkpoints', { token: admin });
    expect(written.status).toBe(201);
    const body = written.body as { checkpoint: { entry_count: number; tip_seq: number; tip_hash: string; key_id: string }; signature: string; name: string };
    // Two appends, each with its request entry: four entries before this request's own.
    expect(body.checkpoint).toMatchObject({ entry_count: 4, tip_seq: 4 });
    expect(body.checkpoint.tip_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    const onDisk = JSON.parse(await readFile(join(sink, body.name), 'utf8')) as { signature: string };
    expect(onDisk.signature).toBe(body.signature);
    expect(JSON.parse(await readFile(join(sink, 'latest.json'), 'utf8'))).toEqual(onDisk);

    const listed = await t.request('GET', '/security/checkpoints', { token: admin });
    expect(listed.body).toMatchObject({ enabled: true, key_id: body.checkpoint.key_id, checkpoints: [{ name: body.name }] });
    expect((listed.body as { public_key: string }).public_key).toMatch(/^ed25519:/);

    const verify = await t.request('GET', '/security/verify', { token: admin });
    expect(verify.body).toMatchObject({ valid: true, checkpoint_status: 'verified', checkpoint: { entry_count: 4, signature_valid: true } });
    expect(verify.body).not.toHaveProperty('reason');
  });

  it('is refused for roles outside admin and auditor, and refused while no sink is configured', async () => {
    const t = await start({});
    const admin = await t.issueKey('admin', 'root');
    const viewer = await t.issueKey('viewer', 'v');
    expect((await t.request('POST', '/security/checkpoints', { token: viewer })).status).toBe(403);
    const off = await t.request('POST', '/security/checkpoints', { token: admin });
    expect(off.status).toBe(409);
    expect(off.body).toMatchObject({ error: { category: 'Conflict' } });
    // No sink: verify behaves as before and says no checkpoint was checked.
    const verify = await t.request('GET', '/security/verify', { token: admin });
    expect(verify.body).toMatchObject({ valid: true, checkpoint_status: 'not_configured', checkpoint: null });
    const auditor = await t.issueKey('auditor', 'a');
    expect((await t.request('GET', '/security/checkpoints', { token: auditor })).body).toMatchObject({ enabled: false, checkpoints: [] });
  });

  it('reports entries cut off the end of the store as valid: false with the counts', async () => {
    const sink = await tempDir('cut');
    const t = await start({ audit: { checkpoints: { sink } } });
    const admin = await t.issueKey('admin', 'root');
    await appendEvents(t, admin, 3);
    const cp = (await t.request('POST', '/security/checkpoints', { token: admin })).body as { checkpoint: { entry_count: number; at: string } };
    expect(cp.checkpoint.entry_count).toBe(6);
    // Remove the newest entries straight from the store's log table: the chain stays linked.
    const db = new Database(dbPath(t));
    db.prepare('DELETE FROM l_audit WHERE seq > ?').run(4);
    db.close();
    const events: PlatformEvent[] = [];
    await watchAllEvents(t.deps.store);
    await t.deps.bus.consume<PlatformEvent>(Streams.platformEvents, { durable: 'ckpt-test', maxDeliver: 1, backoffMs: [0] }, async (e) => void events.push(e.data));
    const verify = await t.request('GET', '/security/verify', { token: admin });
    expect(verify.body).toMatchObject({ valid: false, checkpoint_status: 'failed', entry_count: 4 });
    expect((verify.body as { first_invalid_seq?: number }).first_invalid_seq).toBeUndefined();
    expect((verify.body as { reason: string }).reason).toBe(
      `the chain has 4 entries, the checkpoint of ${cp.checkpoint.at} recorded 6 (entries were removed)`,
    );
    const failed = () => events.filter((e) => e.kind === 'audit.verification.failed');
    await waitUntil(() => failed().length > 0, { message: 'audit.verification.failed', timeoutMs: 10_000 });
    expect(failed().map((e) => e.data)).toEqual([{ first_invalid_seq: null, reason: (verify.body as { reason: string }).reason }]);
  });

  it('refuses to checkpoint over a cut chain (409) until an admin supersedes with a reason, which the signed checkpoint records', async () => {
    const sink = await tempDir('supersede');
    const t = await start({ audit: { checkpoints: { sink } } });
    const admin = await t.issueKey('admin', 'root');
    await appendEvents(t, admin, 3);
    const cp = (await t.request('POST', '/security/checkpoints', { token: admin })).body as { name: string };
    const db = new Database(dbPath(t));
    db.prepare('DELETE FROM l_audit WHERE seq > ?').run(4);
    db.close();

    const refused = await t.request('POST', '/security/checkpoints', { token: admin });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({
      error: { category: 'Conflict', message: expect.stringMatching(/^not writing a checkpoint: the chain has 4 entries, .*supersede_reason/), details: { latest: cp.name } },
    });
    expect((await t.request('GET', '/security/verify', { token: admin })).body).toMatchObject({ valid: false });
    const bad = await t.request('POST', '/security/checkpoints', { token: admin, body: { supersede_reason: '' } });
    expect(bad.status).toBe(400);

    const written = await t.request('POST', '/security/checkpoints', { token: admin, body: { supersede_reason: 'restored the 11-20 backup' } });
    expect(written.status).toBe(201);
    expect(written.body).toMatchObject({ checkpoint: { supersedes: { name: cp.name, entry_count: 6, reason: 'restored the 11-20 backup' } } });
    expect((await t.request('GET', '/security/verify', { token: admin })).body).toMatchObject({ valid: true, checkpoint_status: 'verified' });
    // The replaced checkpoint is still in the sink for anyone who reads its history.
    expect(await readdir(join(sink, 'checkpoints'))).toHaveLength(2);
  });

  it('reports a store replaced by a fresh one with a new chain', async () => {
    const sink = await tempDir('swap');
    const dataDir = await tempDir('data');
    const config = { audit: { checkpoints: { sink } } };
    const first = await start(config, { dataDir });
    const admin = await first.issueKey('admin', 'root');
    await appendEvents(first, admin, 2);
    const cp = (await first.request('POST', '/security/checkpoints', { token: admin })).body as { checkpoint: { entry_count: number } };
    await first.close();
    apis.splice(0);
    for (const file of await readdir(join(dataDir, 'data'))) if (file.startsWith('platform.db')) await rm(join(dataDir, 'data', file));

    const second = await start(config, { dataDir });
    const admin2 = await second.issueKey('admin', 'root');
    await appendEvents(second, admin2, 4);
    const verify = await second.request('GET', '/security/verify', { token: admin2 });
    // The new chain is whole and longer than the checkpoint, but it is not the chain that was anchored.
    expect((verify.body as { entry_count: number }).entry_count).toBeGreaterThan(cp.checkpoint.entry_count);
    expect(verify.body).toMatchObject({ valid: false, checkpoint_status: 'failed' });
    expect((verify.body as { reason: string }).reason).toMatch(
      new RegExp(`^entry ${cp.checkpoint.entry_count}'s hash differs from the checkpoint of .* \\(the chain was replaced or rewritten\\)$`),
    );
  });

  it('reports a forged checkpoint (an edited count) as a signature failure', async () => {
    const sink = await tempDir('forge');
    const t = await start({ audit: { checkpoints: { sink } } });
    const admin = await t.issueKey('admin', 'root');
    await appendEvents(t, admin, 3);
    await t.request('POST', '/security/checkpoints', { token: admin });
    const latest = join(sink, 'latest.json');
    const file = JSON.parse(await readFile(latest, 'utf8')) as { checkpoint: { entry_count: number; tip_seq: number; tip_hash: string } };
    // An attacker who cut the chain to 2 entries lowers the count to match: the signature no longer holds.
    file.checkpoint.entry_count = 2;
    await writeFile(latest, JSON.stringify(file));
    const verify = await t.request('GET', '/security/verify', { token: admin });
    expect(verify.body).toMatchObject({ valid: false, checkpoint_status: 'failed', checkpoint: { entry_count: 2, signature_valid: false } });
    expect((verify.body as { reason: string }).reason).toMatch(/^checkpoint signature does not verify/);
  });

  it('writes checkpoints on a short schedule', async () => {
    const sink = await tempDir('sched');
    const t = await start({ audit: { checkpoints: { sink, interval_secs: 1 } } }, { services: (deps) => [composeCheckpointScheduler(deps)] });
    const admin = await t.issueKey('admin', 'root');
    const deadline = Date.now() + 10_000;
    let count = 0;
    while (Date.now() < deadline && count < 2) {
      await new Promise((r) => setTimeout(r, 200));
      count = ((await t.request('GET', '/security/checkpoints', { token: admin })).body as { checkpoints: unknown[] }).checkpoints.length;
    }
    expect(count).toBeGreaterThanOrEqual(2);
    expect((await readdir(join(sink, 'checkpoints'))).length).toBe(count);
    expect((await t.request('GET', '/security/verify', { token: admin })).body).toMatchObject({ valid: true, checkpoint_status: 'verified' });
  });

  it('writes one checkpoint per period across two api processes sharing a store', async () => {
    const sink = await tempDir('fleet');
    const dataDir = await tempDir('fleet-data');
    const config = { audit: { checkpoints: { sink, interval_secs: 3600 } } };
    const a = await start(config, { dataDir });
    const b = await start(config, { dataDir });
    const ticks = await Promise.all([1, 2, 3].flatMap(() => [a.deps.auditCheckpoints.writeIfDue(), b.deps.auditCheckpoints.writeIfDue()]));
    expect(ticks.filter((t) => t !== null)).toHaveLength(1);
    expect(await a.deps.auditCheckpoints.list(10)).toHaveLength(1);
    expect((await readdir(join(sink, 'checkpoints'))).length).toBe(1);
  });
});

describe('audit checkpoints in an S3 bucket (s3rver)', () => {
  it('answers valid: false with the reason while the bucket cannot be read', async () => {
    s3 = await startS3rver(['audit-anchor']);
    const t = await start({ audit: { checkpoints: { s3: { bucket: 'audit-anchor', endpoint: s3.endpoint, path_style: true, ...S3RVER_KEY } } } });
    const admin = await t.issueKey('admin', 'root');
    expect((await t.request('POST', '/security/checkpoints', { token: admin })).status).toBe(201);
    await s3.close();
    s3 = null;
    const verify = await t.request('GET', '/security/verify', { token: admin });
    expect(verify.status).toBe(200);
    expect(verify.body).toMatchObject({ valid: false, checkpoint_status: 'failed', checkpoint: null });
    expect((verify.body as { reason: string }).reason).toMatch(/^the checkpoint sink s3:\/\/audit-anchor\/ could not be read: /);
  });

  it('writes a checkpoint, reads it back, and verify checks against it', async () => {
    s3 = await startS3rver(['audit-anchor']);
    const t = await start({
      audit: {
        checkpoints: {
          s3: { bucket: 'audit-anchor', endpoint: s3.endpoint, path_style: true, prefix: 'platform-a', ...S3RVER_KEY },
        },
      },
    });
    const admin = await t.issueKey('admin', 'root');
    await appendEvents(t, admin, 2);
    const written = (await t.request('POST', '/security/checkpoints', { token: admin })).body as { name: string; sink: string; signature: string };
    expect(written.sink).toBe('s3://audit-anchor/platform-a/');
    expect(await s3.keys('audit-anchor')).toEqual([`platform-a/${written.name}`, 'platform-a/latest.json'].sort());
    const back = await t.deps.auditCheckpoints.check();
    expect(back).toMatchObject({ status: 'verified', checkpoint: { entry_count: 4, sink: 's3://audit-anchor/platform-a/' } });
    expect((await t.request('GET', '/security/verify', { token: admin })).body).toMatchObject({ valid: true, checkpoint_status: 'verified' });
  });

  it('puts checkpoints with object-lock retention and a checksum when object_lock_days is set (s3rver accepts, does not enforce)', async () => {
    s3 = await startS3rver(['audit-locked']);
    const t = await start({
      audit: { checkpoints: { object_lock_days: 30, s3: { bucket: 'audit-locked', endpoint: s3.endpoint, path_style: true, ...S3RVER_KEY } } },
    });
    const admin = await t.issueKey('admin', 'root');
    const written = await t.request('POST', '/security/checkpoints', { token: admin });
    expect(written.status).toBe(201);
    expect(await s3.keys('audit-locked')).toEqual([(written.body as { name: string }).name, 'latest.json'].sort());
    expect((await t.request('GET', '/security/verify', { token: admin })).body).toMatchObject({ valid: true, checkpoint_status: 'verified' });
  });
});
