import { randomUUID } from 'node:crypto';
import { openS3ArchiveStore } from '@agent-platform/registry-core';
import { S3RVER_KEY, startS3rver, type RunningS3rver } from '@agent-platform/registry-core/testing/s3rver';
import type { Store } from '@agent-platform/store';
import { requireBinary, waitUntil } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFleet, type AppProcess, type Fleet } from '../support/fleet.ts';
import { call } from '../support/platform-process.ts';
import {
  afterArchiveGate,
  liveRange,
  seedOldAudit,
  seedOldRun,
  sweepHolder,
} from '../support/retention-kit.ts';

// Retention in a fleet, started as an operator starts one: two api nodes and an agent worker over
// NATS and Redis, sharing the embedded store and an S3 checkpoint sink (s3rver in this process).
// The store holds a year-old audit trail and two year-old runs, one of them for a claim under a
// legal hold placed through the other node; the period is 30 days and the sweep runs every 2 s.
//
// - The api node that claims the first sweep archives a segment and is SIGKILLed while it writes
//   the checkpoint that precedes deletion (an S3 gate holds that PUT); a new node is started.
// - The node that takes the sweep over once the dead one's lease lapses is SIGKILLed in the middle
//   of deleting the archived entries.
// - The remaining node takes over again and finishes: every old entry archived exactly once, none
//   lost, verify valid on every node; the run under the hold is kept, the other one removed.
// - A killed node is started again; with both nodes ticking, each period is swept once.
const natsBinary = requireBinary('nats-server');
const redisBinary = requireBinary('redis-server');
const OLD_ENTRIES = 1200;
const SEGMENT = 500;
const BUCKET = 'fleet-audit';
const CLAIM = 'CLM-FLEET-000042';

describe.skipIf(natsBinary === null || redisBinary === null)(
  'retention in a fleet: 2 api nodes, 1 worker',
  () => {
    let fleet: Fleet;
    let s3: RunningS3rver;
    let store: Store | undefined;
    const gate = afterArchiveGate();
    const heldRun = randomUUID();
    const plainRun = randomUUID();

    beforeAll(async () => {
      s3 = await startS3rver([BUCKET], { gate: (req) => gate.gate(req) });
      fleet = await startFleet({
        apis: 2,
        workers: 1,
        schedulers: 0,
        prepare: async (dataDir) => {
          await seedOldAudit(dataDir, OLD_ENTRIES);
          await seedOldRun(dataDir, heldRun, CLAIM);
          await seedOldRun(dataDir, plainRun);
        },
        config: {
          logging: { level: 'info' },
          audit: {
            checkpoints: { s3: { bucket: BUCKET, endpoint: s3.endpoint, path_style: true, ...S3RVER_KEY } },
          },
          retention: {
            audit_days: 30,
            runs_days: 30,
            sweep_interval_secs: 2,
            batch_size: 10,
            audit_segment_entries: SEGMENT,
          },
        },
      });
      store = await fleet.openStore();
    }, 240_000);

    afterAll(async () => {
      await store?.close();
      await fleet?.close();
      await s3?.close();
    });

    async function manifest(): Promise<
      Array<{ name: string; checkpoint: string; from_seq: number; to_seq: number }>
    > {
      const objects = openS3ArchiveStore(
        {
          bucket: BUCKET,
          endpoint: s3.endpoint,
          path_style: true,
          region: 'us-east-1',
          prefix: '',
          ...S3RVER_KEY,
        },
        { contentType: 'application/json' },
      );
      try {
        const bytes = await objects.get('archive/manifest.json');
        return bytes === null
          ? []
          : (JSON.parse(Buffer.from(bytes).toString('utf8')) as { manifest: { segments: [] } }).manifest
              .segments;
      } finally {
        await objects.close();
      }
    }

    it('one node sweeps per period; the node holding the sweep killed after archiving and again while deleting, another finishes it: nothing lost, nothing archived twice, holds kept', async () => {
      const urlOf = (p: AppProcess): string => /listening on (\S+)/.exec(p.output())![1]!;
      const alive = new Set<AppProcess>(fleet.apis);
      const holderProcess = async (): Promise<AppProcess> => {
        const holder = await sweepHolder(store!);
        const found = [...alive].find((p) => p.child.pid === holder?.pid);
        if (found === undefined)
          throw new Error(`the sweep holder ${holder?.holder ?? '(none)'} is not a running api node`);
        return found;
      };

      // 1. The first sweep is held after archiving its first segment: kill the node running it.
      await gate.held;
      const first = await holderProcess();
      const other = [...alive].find((p) => p !== first)!;
      expect((await manifest()).map((s) => [s.from_seq, s.to_seq])).toEqual([[1, SEGMENT]]);
      expect((await liveRange(store!)).first).toBe(1);
      // A legal team places a hold through the other node while the sweep is in flight.
      const token = (
        await call(urlOf(other), 'POST', '/auth/keys', { body: { name: 'admin', role: 'admin' } })
      ).body.secret as string;
      const hold = await call(urlOf(other), 'POST', '/retention/holds', {
        token,
        body: { business_key: CLAIM, reason: 'coverage litigation' },
      });
      expect(hold.status).toBe(201);
      await first.kill();
      alive.delete(first);
      // A replacement node boots meanwhile (not awaited: the takeover must not happen unwatched).
      // It is watched from the moment it is spawned, since it may be the node that takes over.
      const replacement = await fleet.launchApi();
      alive.add(replacement);

      // 2. Once the lease lapses another node takes over and deletes the archived entries: as soon
      // as the first batch is gone, every api node is frozen (SIGSTOP), the one holding the sweep is
      // SIGKILLed, and the others are let go.
      await waitUntil(async () => ((await liveRange(store!)).first ?? 1) > 1, {
        timeoutMs: 60_000,
        intervalMs: 2,
        message: 'the deletion of the archived entries to begin',
      });
      const frozen = [...alive];
      for (const p of frozen) process.kill(p.child.pid!, 'SIGSTOP');
      const second = await holderProcess();
      await second.kill();
      alive.delete(second);
      for (const p of frozen) if (p !== second) process.kill(p.child.pid!, 'SIGCONT');
      if (second !== replacement) await replacement.ready();
      const midway = await liveRange(store!);
      expect(midway.first, 'killed in the middle of deleting the archived segment').toBeGreaterThan(1);
      expect(midway.first).toBeLessThanOrEqual(SEGMENT);

      // 3. The remaining node takes over again and finishes.
      const survivorUrl = urlOf([...alive][0]!);
      await waitUntil(
        async () =>
          (await liveRange(store!)).first === OLD_ENTRIES + 1 &&
          (await manifest()).at(-1)?.to_seq === OLD_ENTRIES,
        {
          timeoutMs: 90_000,
          message: 'the remaining node to finish the sweep',
        },
      ).catch((error: unknown) => {
        throw new Error(`${(error as Error).message}\n${fleet.logs()}`);
      });
      expect(fleet.logs()).toMatch(/taking over a sweep whose process stopped renewing its lease/);

      const segments = await manifest();
      expect(segments.map((s) => [s.from_seq, s.to_seq])).toEqual([
        [1, 500],
        [501, 1000],
        [1001, 1200],
      ]);
      expect((await s3.keys(BUCKET)).filter((k) => k.startsWith('archive/segments/')).sort()).toEqual(
        segments.flatMap((s) => [s.name, s.checkpoint]).sort(),
      );
      await waitUntil(
        async () => (await call(survivorUrl, 'GET', `/runs/${plainRun}`, { token })).status === 404,
        { timeoutMs: 30_000, message: 'the unheld old run to be removed' },
      );
      expect((await call(survivorUrl, 'GET', `/runs/${heldRun}`, { token })).status).toBe(200);

      // 4. A killed node comes back; both tick, and each period is swept by one of them.
      const restartedUrl = (await fleet.addApi()).url;
      const sweeps = async () =>
        (
          (await call(survivorUrl, 'GET', '/security/audit?category=retention&limit=1000', { token })).body
            .entries as Array<{ action: string; metadata: { trigger: string; period: number; node: string } }>
        )
          .filter((e) => e.action === 'retention.sweep' && e.metadata.trigger === 'schedule')
          .map((e) => e.metadata);
      const before = (await sweeps()).length;
      await waitUntil(async () => (await sweeps()).length >= before + 5, {
        timeoutMs: 60_000,
        message: 'five more scheduled sweeps',
      });
      const periods = (await sweeps()).map((s) => s.period);
      expect(new Set(periods).size, `one sweep per period: ${JSON.stringify(periods)}`).toBe(periods.length);

      for (const url of [survivorUrl, restartedUrl]) {
        const verify = await call(url, 'GET', '/security/verify?full=true', { token });
        expect(verify.body).toMatchObject({
          valid: true,
          archive: { status: 'verified', segments: 3, to_seq: OLD_ENTRIES },
          live: { from_seq: OLD_ENTRIES + 1 },
        });
      }
      expect((await call(restartedUrl, 'GET', `/runs/${heldRun}`, { token })).status).toBe(200);
      const status = await call(restartedUrl, 'GET', '/retention/status', { token });
      expect(status.body).toMatchObject({
        classes: { audit: { live_from_seq: OLD_ENTRIES + 1, pending_segment: null } },
        holds: [{ business_key: CLAIM, created_by: 'admin' }],
      });
    }, 300_000);
  },
);
