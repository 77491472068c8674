import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openS3ArchiveStore } from '@agent-platform/registry-core';
import { S3RVER_KEY, startS3rver, type RunningS3rver } from '@agent-platform/registry-core/testing/s3rver';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { freePort, waitUntil } from '@agent-platform/testkit';
import { stringify } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeLicence } from '../support/fleet.ts';
import { call, startPlatform, type PlatformProcess } from '../support/platform-process.ts';
import { afterArchiveGate, liveRange, seedOldAudit } from '../support/retention-kit.ts';

// kill -9 of the all-in-one platform in the middle of an audit retention sweep, twice, at the two
// moments that matter: right after a segment is archived (written, read back, verified) and before
// anything is deleted; then in the middle of deleting the archived entries. Each time the platform
// is started again on the same data dir and sink, and the sweep finishes: every entry is either
// live or archived (none lost), every archived segment is one object (none archived twice), and
// GET /security/verify is valid across the archive and the live chain.
//
// The trail is a year old before the platform first starts (1500 entries written into its data
// dir), the period is 30 days and the sweep runs every 2 s. The sink is an S3 bucket (s3rver in
// this process) whose gate holds the first checkpoint PUT after the manifest: the process is
// killed while it waits on it.
const OLD_ENTRIES = 1500;
const SEGMENT = 1000;
const BUCKET = 'audit-archive';

interface Manifest {
  manifest: { segments: Array<{ name: string; checkpoint: string; from_seq: number; to_seq: number }> };
}

describe('kill -9 of the all-in-one platform mid-sweep', () => {
  let dir: string;
  let s3: RunningS3rver;
  let platform: PlatformProcess | undefined;
  let store: Store | undefined;
  const gate = afterArchiveGate();

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ap-retention-crash-'));
    s3 = await startS3rver([BUCKET], { gate: (req) => gate.gate(req) });
    await seedOldAudit(join(dir, 'data'), OLD_ENTRIES);
  }, 120_000);
  afterAll(async () => {
    platform?.kill();
    await platform?.exited;
    await store?.close();
    await s3?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const s3Settings = () => ({
    bucket: BUCKET,
    endpoint: s3.endpoint,
    path_style: true,
    region: 'us-east-1',
    prefix: '',
    ...S3RVER_KEY,
  });

  async function manifest(): Promise<Manifest['manifest']['segments']> {
    const objects = openS3ArchiveStore(s3Settings(), { contentType: 'application/json' });
    try {
      const bytes = await objects.get('archive/manifest.json');
      return bytes === null
        ? []
        : (JSON.parse(Buffer.from(bytes).toString('utf8')) as Manifest).manifest.segments;
    } finally {
      await objects.close();
    }
  }

  it('finishes the sweep after each restart: nothing lost, nothing archived twice, verify valid', async () => {
    const configPath = join(dir, 'agent-platform.toml');
    await writeFile(
      configPath,
      stringify({
        server: { listen: `127.0.0.1:${await freePort()}` },
        storage: { data_dir: join(dir, 'data') },
        licence: await writeLicence(dir, {}),
        logging: { level: 'info' },
        audit: { checkpoints: { s3: s3Settings() } },
        retention: { audit_days: 30, sweep_interval_secs: 2, batch_size: 10, audit_segment_entries: SEGMENT },
      }),
    );
    const start = async (): Promise<string> => {
      platform = startPlatform(dir, ['--config', configPath]);
      return platform.listening(60_000);
    };
    store = await openEmbeddedStore({ path: join(dir, 'data', 'platform.db') });

    // 1. Killed after the first segment is archived, before any deletion.
    await start();
    await Promise.race([
      gate.held,
      platform!.exited.then(() => Promise.reject(new Error(`platform exited:\n${platform!.output()}`))),
    ]);
    platform!.kill();
    await platform!.exited;
    expect((await manifest()).map((s) => [s.from_seq, s.to_seq])).toEqual([[1, SEGMENT]]);
    expect((await liveRange(store)).first).toBe(1);

    // 2. Restarted: once the dead sweep's lease lapses it resumes by deleting the archived
    // entries; it is stopped (SIGSTOP, then SIGKILL) as soon as the first batch is gone.
    await start();
    const pid = platform!.child.pid!;
    await waitUntil(async () => ((await liveRange(store!)).first ?? 1) > 1, {
      timeoutMs: 60_000,
      intervalMs: 2,
      message: 'the deletion of the archived entries to begin',
    });
    process.kill(pid, 'SIGSTOP');
    platform!.kill();
    await platform!.exited;
    const midway = await liveRange(store);
    expect(midway.first, 'killed in the middle of deleting the archived segment').toBeGreaterThan(1);
    expect(midway.first).toBeLessThanOrEqual(SEGMENT);

    // 3. Restarted again: it finishes deleting, archives the rest, and everything checks out.
    const base = await start();
    await waitUntil(
      async () =>
        (await liveRange(store!)).first === OLD_ENTRIES + 1 &&
        (await manifest()).at(-1)?.to_seq === OLD_ENTRIES,
      {
        timeoutMs: 90_000,
        message: 'the sweep to archive every old entry',
      },
    );
    const segments = await manifest();
    expect(segments.map((s) => [s.from_seq, s.to_seq])).toEqual([
      [1, SEGMENT],
      [SEGMENT + 1, OLD_ENTRIES],
    ]);
    const archived = (await s3.keys(BUCKET)).filter((k) => k.startsWith('archive/segments/'));
    expect(archived.sort()).toEqual(segments.flatMap((s) => [s.name, s.checkpoint]).sort());

    const verify = await call(base, 'GET', '/security/verify?full=true');
    expect(verify.body).toMatchObject({
      valid: true,
      live: { from_seq: OLD_ENTRIES + 1 },
      archive: { status: 'verified', segments: 2, from_seq: 1, to_seq: OLD_ENTRIES, checked_segments: 2 },
    });
    const live = await liveRange(store);
    expect(live.count).toBe(live.tip! - OLD_ENTRIES);
    const status = await call(base, 'GET', '/retention/status');
    expect(status.body.classes.audit).toMatchObject({
      live_from_seq: OLD_ENTRIES + 1,
      pending_segment: null,
      archive: { segments: 2, to_seq: OLD_ENTRIES },
    });
    expect(platform!.output()).toMatch(/taking over a sweep whose process stopped renewing its lease/);
  }, 300_000);
});
