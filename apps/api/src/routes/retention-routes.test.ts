import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { PlatformConfig } from '@agent-platform/contracts';
import { fixedClock, parseSignedCheckpoint, verifySegment, type AuditSegment } from '@agent-platform/domain';
import { S3RVER_KEY, startS3rver, type RunningS3rver } from '@agent-platform/registry-core/testing/s3rver';
import { startTestApi, type DeepPartial, type TestApi } from '../testing/index.ts';

// The retention routes over the real api: legal holds placed and lifted without a restart (roles,
// bad input, the audit trail), the status, and an audit sweep through HTTP after which verify is
// still valid and tampering is still caught. A fixed clock stands in for the days passing.

interface RawDb {
  prepare(sql: string): { run(...p: unknown[]): unknown };
  close(): void;
}
const Database = createRequire(import.meta.url)('better-sqlite3') as new (path: string) => RawDb;

const AGENT = '3f2a8c1e-5b6d-4e7f-8a9b-0c1d2e3f4a5b';
const DAY = 86_400_000;
const apis: TestApi[] = [];
const scratch: string[] = [];
let s3: RunningS3rver | null = null;

afterEach(async () => {
  for (const api of apis.splice(0)) await api.close();
  await s3?.close();
  s3 = null;
  for (const dir of scratch.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function start(
  config: DeepPartial<PlatformConfig>,
  clock = fixedClock('2026-01-01T00:00:00.000Z'),
): Promise<{ t: TestApi; clock: typeof clock }> {
  const t = await startTestApi({ config: { auth: { mode: 'local' }, ...config }, clock });
  apis.push(t);
  return { t, clock };
}

async function sinkDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ap-retention-sink-'));
  scratch.push(dir);
  return dir;
}

describe('legal holds through the api', () => {
  it('auditors and admins place and lift holds; operators read them; others are refused', async () => {
    const { t, clock } = await start({ retention: { hold_business_keys: ['POL-77'] } });
    const admin = await t.issueKey('admin', 'root');
    const auditor = await t.issueKey('auditor', 'counsel');
    const operator = await t.issueKey('operator', 'ops');
    const viewer = await t.issueKey('viewer', 'v');

    const placed = await t.request('POST', '/retention/holds', {
      token: auditor,
      body: { agent_id: AGENT, reason: 'matter 2026-17' },
    });
    expect(placed.status).toBe(201);
    expect(placed.body).toMatchObject({
      agent_id: AGENT,
      business_key: null,
      reason: 'matter 2026-17',
      source: 'api',
      created_by: 'counsel',
    });
    clock.advance(1000);
    const byKey = await t.request('POST', '/retention/holds', {
      token: admin,
      body: { business_key: 'CLM-2026-000123', reason: 'claim dispute' },
    });
    expect(byKey.status).toBe(201);

    const listed = await t.request('GET', '/retention/holds', { token: operator });
    expect(listed.status).toBe(200);
    expect((listed.body as { holds: Array<{ id: string }> }).holds.map((h) => h.id)).toEqual([
      'config:business_key:POL-77',
      placed.body.id,
      byKey.body.id,
    ]);

    expect(
      (
        await t.request('POST', '/retention/holds', {
          token: operator,
          body: { agent_id: AGENT, reason: 'x' },
        })
      ).status,
    ).toBe(403);
    expect(
      (await t.request('DELETE', `/retention/holds/${placed.body.id as string}`, { token: operator })).status,
    ).toBe(403);
    expect((await t.request('GET', '/retention/holds', { token: viewer })).status).toBe(403);
    expect((await t.request('GET', '/retention/status', { token: viewer })).status).toBe(403);

    const lifted = await t.request('DELETE', `/retention/holds/${placed.body.id as string}`, {
      token: auditor,
    });
    expect(lifted.status).toBe(200);
    expect(lifted.body).toMatchObject({ id: placed.body.id, agent_id: AGENT });
    expect(
      (await t.request('DELETE', `/retention/holds/${placed.body.id as string}`, { token: auditor })).status,
    ).toBe(404);
    const configHold = await t.request('DELETE', '/retention/holds/config:business_key:POL-77', {
      token: admin,
    });
    expect(configHold.status).toBe(409);
    expect(configHold.body.error.message).toMatch(/configured in \[retention\]/);

    // Each change is in the trail twice: the request, and the hold with its subject and reason.
    const trail = await t.request('GET', '/security/audit?category=retention&limit=20', { token: auditor });
    const entries = (
      trail.body as {
        entries: Array<{ action: string; identity: string; metadata: Record<string, unknown> }>;
      }
    ).entries;
    expect(entries.filter((e) => e.action === 'POST /retention/holds')).toHaveLength(2);
    expect(
      entries.find((e) => e.action === 'retention.hold.placed' && e.identity === 'counsel')?.metadata,
    ).toMatchObject({ agent_id: AGENT, reason: 'matter 2026-17' });
    expect(entries.find((e) => e.action === 'retention.hold.lifted')?.metadata).toMatchObject({
      hold_id: placed.body.id,
      agent_id: AGENT,
    });
  });

  it('refuses bad holds with a clear error and stores nothing', async () => {
    const { t } = await start({});
    const admin = await t.issueKey('admin', 'root');
    const bad = async (body: unknown): Promise<{ status: number; message: string }> => {
      const res = await t.request('POST', '/retention/holds', { token: admin, body });
      return { status: res.status, message: String(res.body?.error?.message ?? '') };
    };
    expect(await bad({ reason: 'nothing named' })).toMatchObject({
      status: 400,
      message: expect.stringMatching(/exactly one of agent_id and business_key/),
    });
    expect(await bad({ agent_id: AGENT, business_key: 'CLM-1', reason: 'both' })).toMatchObject({
      status: 400,
    });
    expect(await bad({ agent_id: 'not-a-uuid', reason: 'x' })).toMatchObject({
      status: 400,
      message: expect.stringMatching(/agent_id/),
    });
    expect(await bad({ business_key: 'CLM\n1', reason: 'x' })).toMatchObject({
      status: 400,
      message: expect.stringMatching(/business_key/),
    });
    expect(await bad({ business_key: 'K'.repeat(129), reason: 'x' })).toMatchObject({ status: 400 });
    expect(await bad({ agent_id: AGENT })).toMatchObject({
      status: 400,
      message: expect.stringMatching(/reason/),
    });
    expect(await bad({ agent_id: AGENT, reason: 'x', until: 'forever' })).toMatchObject({ status: 400 });
    expect((await t.request('GET', '/retention/holds', { token: admin })).body).toEqual({ holds: [] });
  });
});

describe('configuration', () => {
  it('refuses audit retention without a sink to archive to, naming the fix', async () => {
    await expect(startTestApi({ config: { retention: { audit_days: 30 } } })).rejects.toThrow(
      /retention\.audit_days: 30 needs an archive .*set \[audit\.checkpoints\] sink/,
    );
  });
});

describe('an audit sweep through the api', () => {
  it('archives old entries to the sink, GET /security/verify stays valid, and cutting the live end is still caught', async () => {
    const sink = await sinkDir();
    const { t, clock } = await start({
      audit: { checkpoints: { sink } },
      retention: { audit_days: 30, audit_segment_entries: 20 },
    });
    const admin = await t.issueKey('admin', 'root');
    for (let i = 0; i < 30; i++)
      expect(
        (await t.request('POST', '/audit/append', { token: admin, body: { event_type: `old-${i}` } })).status,
      ).toBe(201);
    clock.advance(60 * DAY);
    for (let i = 0; i < 3; i++)
      await t.request('POST', '/audit/append', { token: admin, body: { event_type: `new-${i}` } });

    const sweep = await t.request('POST', '/retention/sweep', { token: admin });
    expect(sweep.status).toBe(200);
    expect(sweep.body).toMatchObject({
      trigger: 'manual',
      status: 'completed',
      classes: { audit: { status: 'done', deleted: 60, archived_segments: 3, archived_to_seq: 60 } },
    });

    const status = (await t.request('GET', '/retention/status', { token: admin })).body;
    expect(status).toMatchObject({
      classes: {
        audit: {
          retention_days: 30,
          live_from_seq: 61,
          archive: { sink: `dir:${sink}`, segments: 3, from_seq: 1, to_seq: 60 },
        },
      },
      last_sweep: { trigger: 'manual' },
    });

    const verify = await t.request('GET', '/security/verify?full=true', { token: admin });
    expect(verify.body).toMatchObject({
      valid: true,
      checkpoint_status: 'verified',
      live: { from_seq: 61 },
      archive: { status: 'verified', segments: 3, to_seq: 60 },
    });

    // Offline, with the public key only: each archived segment and its checkpoint.
    const { public_key: publicKey } = (await t.request('GET', '/security/checkpoints', { token: admin }))
      .body as { public_key: string };
    const manifest = JSON.parse(await readFile(join(sink, 'archive', 'manifest.json'), 'utf8')) as {
      manifest: { segments: Array<{ name: string; checkpoint: string }> };
    };
    for (const ref of manifest.manifest.segments) {
      const segment = JSON.parse(await readFile(join(sink, ref.name), 'utf8')) as AuditSegment;
      const checkpoint = parseSignedCheckpoint(await readFile(join(sink, ref.checkpoint), 'utf8'));
      if (typeof checkpoint === 'string') throw new Error(checkpoint);
      expect(await verifySegment(segment, checkpoint, publicKey)).toMatchObject({ valid: true });
    }

    // A checkpoint after the sweep counts the archived entries: it is written, not refused.
    expect((await t.request('POST', '/security/checkpoints', { token: admin })).status).toBe(201);
    const db = new Database(join(t.dataDir, 'data', 'platform.db'));
    db.prepare('DELETE FROM l_audit WHERE seq > (SELECT max(seq) - 2 FROM l_audit)').run();
    db.close();
    await t.restart();
    const admin2 = await t.issueKey('admin', 'root2');
    const cut = await t.request('GET', '/security/verify', { token: admin2 });
    expect(cut.body).toMatchObject({ valid: false, checkpoint_status: 'failed' });
    expect((cut.body as { reason: string }).reason).toMatch(/entries were removed/);
  });

  it('deletes nothing while the S3 sink is unreachable', async () => {
    s3 = await startS3rver(['audit-anchor']);
    const { t, clock } = await start({
      audit: {
        checkpoints: {
          s3: { bucket: 'audit-anchor', endpoint: s3.endpoint, path_style: true, ...S3RVER_KEY },
        },
      },
      retention: { audit_days: 30 },
    });
    const admin = await t.issueKey('admin', 'root');
    for (let i = 0; i < 5; i++)
      await t.request('POST', '/audit/append', { token: admin, body: { event_type: `old-${i}` } });
    clock.advance(60 * DAY);
    await s3.close();
    s3 = null;
    const before = (await t.request('GET', '/security/status', { token: admin })).body
      .audit_entries as number;
    const sweep = await t.request('POST', '/retention/sweep', { token: admin });
    expect(sweep.body).toMatchObject({
      status: 'partial',
      classes: { audit: { status: 'failed', deleted: 0 } },
    });
    expect((sweep.body as { classes: { audit: { error: string } } }).classes.audit.error).toMatch(
      /could not be read|ECONNREFUSED/,
    );
    // Nothing deleted: the only change is two new entries, the sweep's own and its request's.
    expect((await t.request('GET', '/security/status', { token: admin })).body.audit_entries).toBe(
      before + 2,
    );
  });
});
