import { readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AppendLog, DropOptions, LogOptions, Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { ARCHIVE_MANIFEST, checkManifest, type ArchivedSegment } from '../audit/audit-archive.ts';
import { createAuditCheckpoints } from '../audit/audit-checkpoints.ts';
import { parseSignedCheckpoint } from '../audit/audit-checkpoint.ts';
import { CHAIN_ANCHOR } from '../audit/audit-hash.ts';
import { verifySegment, type AuditSegment } from '../audit/audit-segment.ts';
import { createAuditTrail } from '../audit/audit-trail.ts';
import { createRetentionService } from './retention-service.ts';
import {
  NOW,
  openRetentionHarness,
  recordAudit,
  type RetentionHarness,
} from './testing/retention-harness.ts';

// The audit class: expired entries leave the live store only once archived to the checkpoint sink
// as verifiable segments; verify then holds across the archive and the live chain, and every way
// of tampering with either is still reported. A fixed clock stands in for the days passing.

interface RawDb {
  prepare(sql: string): { run(...p: unknown[]): unknown; get(...p: unknown[]): unknown };
  close(): void;
}
const Database = createRequire(import.meta.url)('better-sqlite3') as new (path: string) => RawDb;

const HELD_AGENT = '7d3c9a2e-1f4b-4c8e-9a6d-2b5e8f0c1a3d';
const manual = { identity: 'tester', role: 'admin' };

let h: RetentionHarness;
afterEach(async () => h?.close());

/** 100 entries long ago, then 5 recent ones at NOW: with audit_days 30 the first 100 are due. */
async function seeded(settings: Parameters<typeof openRetentionHarness>[0] = {}): Promise<RetentionHarness> {
  h = await openRetentionHarness({ audit_days: 30, ...settings });
  await recordAudit(h, 100);
  h.clock.set(NOW);
  await recordAudit(h, 5);
  return h;
}

async function manifestOf(harness: RetentionHarness): Promise<ArchivedSegment[]> {
  const bytes = await harness.sink.read(ARCHIVE_MANIFEST);
  if (bytes === null) return [];
  const manifest = checkManifest(bytes, harness.signer.publicKeyPem);
  if (typeof manifest === 'string') throw new Error(manifest);
  return manifest.segments;
}

async function liveSeqs(store: Store): Promise<number[]> {
  return (await store.log('audit').scan(1, 10_000)).map((e) => e.seq);
}

function sql(harness: RetentionHarness, statement: string, ...params: unknown[]): void {
  const db = new Database(harness.dbPath);
  try {
    db.prepare(statement).run(...params);
  } finally {
    db.close();
  }
}

describe('audit retention: archive, then delete', () => {
  it('archives expired entries as segments that verify offline, removes them, and verify stays valid', async () => {
    await seeded();
    const report = await h.retention.sweepNow(manual);
    expect(report.classes.audit).toMatchObject({
      status: 'done',
      deleted: 100,
      archived_segments: 4,
      archived_to_seq: 100,
      held_from_seq: null,
    });

    const segments = await manifestOf(h);
    expect(segments.map((s) => [s.from_seq, s.to_seq])).toEqual([
      [1, 25],
      [26, 50],
      [51, 75],
      [76, 100],
    ]);
    // Offline, as `agent-platform audit verify-segment` does: each segment against its own
    // checkpoint with the public key only, and each linking to the one before it.
    let prev = CHAIN_ANCHOR;
    for (const ref of segments) {
      const segment = JSON.parse(await readFile(join(h.sink.dir, ref.name), 'utf8')) as AuditSegment;
      const checkpoint = parseSignedCheckpoint(await readFile(join(h.sink.dir, ref.checkpoint), 'utf8'));
      if (typeof checkpoint === 'string') throw new Error(checkpoint);
      expect(await verifySegment(segment, checkpoint, h.signer.publicKey)).toMatchObject({
        valid: true,
        checked_entries: 25,
      });
      expect(segment.prev_hash).toBe(prev);
      prev = segment.entries.at(-1)!.hash;
    }

    expect((await liveSeqs(h.store))[0]).toBe(101);
    const verify = await h.verify();
    expect(verify).toMatchObject({
      valid: true,
      checkpoint_status: 'verified',
      live: { from_seq: 101 },
      archive: { status: 'verified', segments: 4, from_seq: 1, to_seq: 100, checked_segments: 4 },
    });
    expect(verify.entry_count).toBe((await h.store.log('audit').tip())!.seq);
    // A fresh process (no remembered prefix, no remembered segments) agrees, fully.
    const other = await h.open();
    expect(await other.audit.verify({ full: true })).toMatchObject({
      valid: true,
      archive: { checked_segments: 4 },
    });

    // Nothing left to do: a second sweep writes no object and deletes nothing.
    const writes = h.sink.writes.length;
    expect((await h.retention.sweepNow(manual)).classes.audit).toMatchObject({
      deleted: 0,
      archived_segments: 0,
      archived_to_seq: 100,
    });
    expect(h.sink.writes.length).toBe(writes);
    expect((await h.retention.status()).classes.audit).toMatchObject({
      live_from_seq: 101,
      archive: { segments: 4, from_seq: 1, to_seq: 100 },
      pending_segment: null,
    });
  });

  it('never archives the newest entry, and goes on archiving in later sweeps as entries expire', async () => {
    h = await openRetentionHarness({ audit_days: 30 });
    await recordAudit(h, 30);
    h.clock.set(NOW);
    await h.retention.sweepNow(manual);
    // Every entry had expired; the newest stays live so the chain goes on from it (31 is the
    // sweep's own audit entry).
    expect(await liveSeqs(h.store)).toEqual([30, 31]);
    h.clock.advance(40 * 86_400_000);
    await h.retention.sweepNow(manual);
    expect((await manifestOf(h)).at(-1)?.to_seq).toBe(30);
    expect(await liveSeqs(h.store)).toEqual([31, 32]);
    expect(await h.verify({ full: true })).toMatchObject({ valid: true });
  });
});

describe('audit retention: tampering is still caught', () => {
  async function swept(): Promise<void> {
    await seeded();
    await h.retention.sweepNow(manual);
    await recordAudit(h, 3);
    await h.checkpoints.write();
    expect(await h.verify()).toMatchObject({ valid: true });
  }

  it('entries cut off the end of the live log', async () => {
    await swept();
    const tip = (await h.store.log('audit').tip())!.seq;
    sql(h, 'DELETE FROM l_audit WHERE seq > ?', tip - 2);
    // This process had verified the tip: it finds it gone at once.
    const report = await h.verify();
    expect(report).toMatchObject({ valid: false });
    expect(report.reason).toMatch(/entry removed after it was verified/);
    // A fresh process walks a chain that is intact but short: the checkpoint catches it.
    const fresh = await (await h.open()).audit.verify();
    expect(fresh).toMatchObject({ valid: false, checkpoint_status: 'failed' });
    expect(fresh.valid === false && fresh.reason).toMatch(/entries were removed/);
  });

  it('the store replaced by a fresh one', async () => {
    await swept();
    await h.close().catch(() => undefined);
    const fresh = await openRetentionHarness({ audit_days: 30 });
    // The same sink and key as the real platform, over a store with a new chain of its own.
    const store = await openEmbeddedStore({ path: join(fresh.dir, 'other.db') });
    h = fresh;
    const checkpoints = createAuditCheckpoints({
      store,
      clock: fresh.clock,
      sink: fresh.sink,
      signer: fresh.signer,
      intervalSecs: () => 3600,
    });
    const trail = createAuditTrail({
      store,
      clock: fresh.clock,
      enabled: true,
      checkpoints,
      archive: checkpoints.archive,
    });
    for (let i = 0; i < 120; i++)
      await trail.record({
        category: 'request',
        identity: 'x',
        role: 'admin',
        action: 'a',
        target: 't',
        result: '200',
        metadata: null,
      });
    await checkpoints.write();
    const retention = createRetentionService({
      store,
      clock: fresh.clock,
      settings: () => ({ ...fresh.settings, audit_days: 1 }),
      auditEnabled: true,
      archive: checkpoints.archive,
      writeCheckpoint: () => checkpoints.write(),
      audit: trail,
      licence: () => ({ kind: 'none', reason: '' }),
      node: 'x',
      log: { info: () => undefined, warn: () => undefined, debug: () => undefined },
    });
    fresh.clock.advance(2 * 86_400_000);
    await retention.sweepNow(manual);
    expect(await trail.verify()).toMatchObject({ valid: true });
    // Now swap the store under the archive for a brand-new chain.
    const replacement = await openEmbeddedStore({ path: join(fresh.dir, 'replacement.db') });
    const swapped = createAuditTrail({
      store: replacement,
      clock: fresh.clock,
      enabled: true,
      checkpoints: createAuditCheckpoints({
        store: replacement,
        clock: fresh.clock,
        sink: fresh.sink,
        signer: fresh.signer,
        intervalSecs: () => 3600,
      }),
      archive: checkpoints.archive,
    });
    for (let i = 0; i < 200; i++)
      await swapped.record({
        category: 'request',
        identity: 'y',
        role: 'admin',
        action: 'a',
        target: 't',
        result: '200',
        metadata: null,
      });
    const report = await swapped.verify();
    expect(report).toMatchObject({ valid: false });
    expect(report.valid === false && report.reason).toMatch(/broken link|replaced|removed/);
    await Promise.all([store.close(), replacement.close()]);
  });

  it('an archived segment deleted from the sink', async () => {
    await swept();
    const [first] = await manifestOf(h);
    await rm(join(h.sink.dir, first!.name));
    const other = await h.open();
    const report = await other.audit.verify();
    expect(report).toMatchObject({ valid: false, archive: { status: 'failed' } });
    expect(report.valid === false && report.reason).toMatch(/archived segment .* is missing/);
    // The process that had verified it before finds it with full=true.
    expect(await h.verify({ full: true })).toMatchObject({ valid: false, first_invalid_seq: 1 });
  });

  it('an archived segment altered in the sink', async () => {
    await swept();
    const [, second] = await manifestOf(h);
    const path = join(h.sink.dir, second!.name);
    const segment = JSON.parse(await readFile(path, 'utf8')) as AuditSegment;
    segment.entries[3]!.target = '/vault/rewritten';
    await writeFile(path, JSON.stringify(segment, null, 2));
    const report = await h.verify({ full: true });
    expect(report).toMatchObject({ valid: false, first_invalid_seq: 26 });
    expect(report.valid === false && report.reason).toMatch(/was altered/);
  });

  it('the archive manifest deleted or forged', async () => {
    await swept();
    const original = await readFile(join(h.sink.dir, ARCHIVE_MANIFEST));
    await rm(join(h.sink.dir, ARCHIVE_MANIFEST));
    const gone = await h.verify();
    expect(gone).toMatchObject({ valid: false, first_invalid_seq: 101 });
    expect(gone.valid === false && gone.reason).toMatch(/seq gap/);

    const forged = JSON.parse(original.toString()) as { manifest: { segments: ArchivedSegment[] } };
    forged.manifest.segments.pop();
    await writeFile(join(h.sink.dir, ARCHIVE_MANIFEST), JSON.stringify(forged));
    const report = await h.verify();
    expect(report).toMatchObject({ valid: false, archive: { status: 'failed' } });
    expect(report.valid === false && report.reason).toMatch(/signature does not verify/);
  });
});

describe('audit retention with a legal hold', () => {
  it('stops before the first expired entry a hold covers, keeps it through several sweeps, archives it once lifted', async () => {
    h = await openRetentionHarness({ audit_days: 30 });
    await recordAudit(h, 40);
    await recordAudit(h, 1, { target: `/agents/${HELD_AGENT}/start` });
    await recordAudit(h, 20);
    await recordAudit(h, 1, { target: '/x', metadata: { agent_id: HELD_AGENT } });
    await recordAudit(h, 10);
    h.clock.set(NOW);
    const hold = await h.retention.holds.add(
      { agent_id: HELD_AGENT, reason: 'matter 17' },
      { identity: 'counsel', role: 'auditor' },
    );

    for (let i = 0; i < 3; i++) {
      const report = await h.retention.sweepNow(manual);
      expect(report.classes.audit).toMatchObject({ archived_to_seq: 40, held_from_seq: 41 });
      expect(report.classes.audit.held).toBe(32);
      expect((await liveSeqs(h.store))[0]).toBe(41);
      h.clock.advance(86_400_000);
    }
    expect(await h.verify({ full: true })).toMatchObject({ valid: true });

    await h.retention.holds.remove(hold.id, manual);
    const report = await h.retention.sweepNow(manual);
    expect(report.classes.audit).toMatchObject({ held_from_seq: null, archived_to_seq: 72 });
    expect(await h.verify({ full: true })).toMatchObject({ valid: true });
    // Placing and lifting the hold are in the trail, with its subject and reason.
    const entries = await h.audit.query({ limit: 50, category: 'retention' });
    expect(entries.map((e) => e.action)).toEqual(
      expect.arrayContaining(['retention.hold.placed', 'retention.hold.lifted']),
    );
    expect(entries.find((e) => e.action === 'retention.hold.placed')?.metadata).toMatchObject({
      agent_id: HELD_AGENT,
      reason: 'matter 17',
    });
  });
});

describe('audit retention when the sink fails, and after a crash at any step', () => {
  it('deletes nothing while the sink cannot be written, and archives once it is back', async () => {
    await seeded();
    h.sink.fail = (op) => (op === 'put' ? new Error('EACCES: sink is read-only') : null);
    const report = await h.retention.sweepNow(manual);
    expect(report.status).toBe('partial');
    expect(report.classes.audit).toMatchObject({ status: 'failed', deleted: 0, archived_segments: 0 });
    expect(report.classes.audit.error).toMatch(/EACCES/);
    expect(await liveSeqs(h.store)).toHaveLength(106);
    expect((await h.retention.status()).classes.audit.pending_segment).toEqual({ from_seq: 1, to_seq: 25 });

    h.sink.fail = (op) => (op === 'read' ? new Error('ECONNREFUSED') : null);
    expect((await h.retention.sweepNow(manual)).classes.audit).toMatchObject({
      status: 'failed',
      deleted: 0,
    });
    expect(await liveSeqs(h.store)).toHaveLength(107);

    h.sink.fail = null;
    expect((await h.retention.sweepNow(manual)).classes.audit).toMatchObject({
      status: 'done',
      deleted: 100,
      archived_to_seq: 100,
    });
    expect(await h.verify({ full: true })).toMatchObject({ valid: true });
  });

  // Each write of a sweep, in order, is where a process may die: segment, its checkpoint, the
  // manifest, the latest checkpoint (then deletion, below). A failing sink write at step k stands
  // in for the kill (nothing after it runs); a new service over the same store and sink finishes.
  for (const step of [0, 1, 2, 3, 4, 5, 6, 9]) {
    it(`a sweep stopped at sink write ${step} is finished by the next one: nothing lost, nothing archived twice`, async () => {
      await seeded();
      let writes = 0;
      h.sink.fail = (op) => (op === 'put' && writes++ === step ? new Error('killed') : null);
      await h.retention.sweepNow(manual);
      h.sink.fail = null;
      const restarted = await h.open('restarted');
      const report = await restarted.retention.sweepNow(manual);
      expect(report.classes.audit).toMatchObject({ status: 'done', archived_to_seq: 100 });
      expect((await liveSeqs(h.store))[0]).toBe(101);
      expect(await restarted.audit.verify({ full: true })).toMatchObject({
        valid: true,
        archive: { segments: 4 },
      });
      // Each segment object was written once (a retry finds it and keeps it), and the sink holds
      // no segment outside the manifest.
      const segmentWrites = h.sink.writes.filter((n) => /^archive\/segments\/\d+-\d+\.json$/.test(n));
      expect(new Set(segmentWrites).size).toBe(segmentWrites.length);
      const onDisk = (await readdir(join(h.sink.dir, 'archive', 'segments')))
        .filter((n) => !n.includes('checkpoint'))
        .sort();
      expect(onDisk).toEqual((await manifestOf(h)).map((s) => s.name.slice('archive/segments/'.length)));
    });
  }

  it('a sweep stopped in the middle of deleting archived entries is finished by the next one', async () => {
    await seeded();
    let drops = 0;
    const dying = storeWithFailingDrops(h.store, () => ++drops > 2);
    const retention = createRetentionService({
      store: dying,
      clock: h.clock,
      settings: () => h.settings,
      auditEnabled: true,
      archive: h.checkpoints.archive,
      writeCheckpoint: () => h.checkpoints.write(),
      audit: h.audit,
      licence: () => h.licence,
      node: 'dying',
      log: { info: () => undefined, warn: () => undefined, debug: () => undefined },
    });
    expect((await retention.sweepNow(manual)).classes.audit).toMatchObject({
      status: 'failed',
      archived_to_seq: 25,
      deleted: 20,
    });
    // Archived entries 21..25 are still live: verify holds meanwhile, from the archive's end.
    expect((await liveSeqs(h.store))[0]).toBe(21);
    expect(await h.verify({ full: true })).toMatchObject({
      valid: true,
      live: { from_seq: 26 },
      archive: { to_seq: 25 },
    });
    const restarted = await h.open('restarted');
    expect((await restarted.retention.sweepNow(manual)).classes.audit).toMatchObject({
      status: 'done',
      deleted: 80,
      archived_to_seq: 100,
    });
    expect((await liveSeqs(h.store))[0]).toBe(101);
    expect(await restarted.audit.verify({ full: true })).toMatchObject({ valid: true });
  });

  it('refuses to archive over a live chain that no longer links to the archive', async () => {
    await seeded();
    await h.retention.sweepNow(manual);
    h.clock.advance(40 * 86_400_000);
    await recordAudit(h, 2);
    sql(h, `UPDATE l_audit SET body = json_set(body, '$.target', 'forged') WHERE seq = 102`);
    const report = await h.retention.sweepNow(manual);
    expect(report.classes.audit).toMatchObject({ status: 'failed', deleted: 0 });
    expect(report.classes.audit.error).toMatch(/hash mismatch|read-back/);
    expect((await liveSeqs(h.store))[0]).toBe(101);
  });
});

/** The store, with the audit log's `dropBefore` failing once `dead()` says so (a process killed mid-delete). */
function storeWithFailingDrops(inner: Store, dead: () => boolean): Store {
  return {
    counters: inner.counters,
    health: () => inner.health(),
    close: () => inner.close(),
    collection: (n, o) => inner.collection(n, o),
    log: <T extends object>(name: string, o?: LogOptions<T>) => {
      const log = inner.log<T>(name, o);
      if (name !== 'audit') return log;
      const wrapped: AppendLog<T> = {
        append: (b) => log.append(b),
        tip: () => log.tip(),
        count: () => log.count(),
        list: (q) => log.list(q),
        scan: (from, limit) => log.scan(from, limit),
        dropBefore: async (before: number, options?: DropOptions) => {
          if (dead()) throw new Error('killed while deleting');
          return log.dropBefore(before, options);
        },
      };
      return wrapped;
    },
  };
}
