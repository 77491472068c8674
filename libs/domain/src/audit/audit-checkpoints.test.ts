import { generateKeyPairSync, sign } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { fixedClock } from '../time/clock.ts';
import type { CheckpointSigner, CheckpointSink } from './audit-checkpoint.ts';
import { createAuditCheckpoints } from './audit-checkpoints.ts';
import { createAuditTrail } from './audit-trail.ts';

interface RawDb {
  prepare(sql: string): { run(...p: unknown[]): unknown };
  close(): void;
}
const Database = createRequire(import.meta.url)('better-sqlite3') as new (path: string) => RawDb;

function memorySink(): CheckpointSink & { names: string[] } {
  const objects = new Map<string, Uint8Array>();
  const names: string[] = [];
  return {
    describe: 'memory:',
    names,
    async write(name, bytes) {
      names.push(name);
      objects.set(name, bytes);
      objects.set('latest.json', bytes);
    },
    async put(name, bytes) {
      objects.set(name, bytes);
    },
    latest: async () => objects.get('latest.json') ?? null,
    read: async (name) => objects.get(name) ?? null,
    close: async () => undefined,
  };
}

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const signer: CheckpointSigner = {
  keyId: 'sha256:k',
  publicKey: 'unused',
  publicKeyPem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
  sign: (bytes) => sign(null, bytes, privateKey).toString('base64url'),
};

let dir: string;
const stores: Store[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-checkpoints-'));
});
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  await rm(dir, { recursive: true, force: true });
});

describe('scheduled checkpoints across processes', () => {
  it('writes exactly one checkpoint per period however many instances tick on one store', async () => {
    const clock = fixedClock('2026-11-25T12:00:10.000Z');
    const sink = memorySink();
    // Two handles on one SQLite file: two processes of a fleet.
    // The store's expiry clock is the platform's (as composition wires it).
    for (let i = 0; i < 2; i++) stores.push(await openEmbeddedStore({ path: join(dir, 'platform.db'), clock: () => clock.now() }));
    const instances = stores.map((store) => createAuditCheckpoints({ store, clock, sink, signer, intervalSecs: () => 60 }));
    const tick = () => Promise.all(instances.flatMap((c) => [c.writeIfDue(), c.writeIfDue()]));

    expect((await tick()).filter((r) => r !== null)).toHaveLength(1);
    clock.advance(30_000); // same period
    expect((await tick()).filter((r) => r !== null)).toHaveLength(0);
    clock.advance(30_000); // the next one
    expect((await tick()).filter((r) => r !== null)).toHaveLength(1);
    expect(sink.names).toHaveLength(2);
    expect((await instances[1]!.list(10)).map((r) => r.checkpoint.at)).toEqual(['2026-11-25T12:01:10.000Z', '2026-11-25T12:00:10.000Z']);
    expect(await instances[0]!.check()).toMatchObject({ status: 'verified' });
  });

  it('dates a scheduled checkpoint at its claim: a slow check before it cannot push it into the next period', async () => {
    const clock = fixedClock('2026-11-25T12:00:50.000Z');
    const base = memorySink();
    let slow = true;
    // The check before the first write takes 20 s (a loaded node, a long chain to match).
    const sink: CheckpointSink = {
      ...base,
      latest: async () => {
        if (slow) {
          slow = false;
          clock.advance(20_000);
        }
        return base.latest();
      },
    };
    for (let i = 0; i < 2; i++) stores.push(await openEmbeddedStore({ path: join(dir, 'platform.db'), clock: () => clock.now() }));
    const [a, b] = stores.map((store) => createAuditCheckpoints({ store, clock, sink, signer, intervalSecs: () => 60 }));
    const first = await a!.writeIfDue();
    const second = await b!.writeIfDue();
    expect([first?.checkpoint.at, second?.checkpoint.at]).toEqual(['2026-11-25T12:00:50.000Z', '2026-11-25T12:01:10.000Z']);
    expect(base.names).toEqual(['checkpoints/2026-11-25T12-00-50.000Z-0.json', 'checkpoints/2026-11-25T12-01-10.000Z-0.json']);
  });

  it('writes nothing without a sink and says so', async () => {
    const store = await openEmbeddedStore({ path: join(dir, 'platform.db') });
    stores.push(store);
    const off = createAuditCheckpoints({ store, clock: fixedClock('2026-11-25T12:00:00Z'), sink: null, signer, intervalSecs: () => 60 });
    expect(await off.writeIfDue()).toBeNull();
    await expect(off.write()).rejects.toMatchObject({ category: 'Conflict' });
    expect(await off.check()).toEqual({ status: 'not_configured', checkpoint: null });
  });
});

describe('a chain that no longer reaches the latest checkpoint', () => {
  it('is never checkpointed over silently: the scheduled write refuses every period, an operator supersedes with a reason', async () => {
    const clock = fixedClock('2026-11-25T12:00:10.000Z');
    const sink = memorySink();
    const store = await openEmbeddedStore({ path: join(dir, 'platform.db'), clock: () => clock.now() });
    stores.push(store);
    const audit = createAuditTrail({ store, clock, enabled: true });
    const checkpoints = createAuditCheckpoints({ store, clock, sink, signer, intervalSecs: () => 60 });
    const record = (i: number) => audit.record({ category: 'audit', identity: 'tester', role: 'admin', action: `event-${i}`, target: '-', result: 'ok' });
    for (let i = 0; i < 6; i++) await record(i);
    const first = await checkpoints.write();
    expect(first.checkpoint).toMatchObject({ entry_count: 6, tip_seq: 6 });

    // Entries cut off the end, then new ones appended: the next period's checkpoint would have
    // recorded the cut chain as the truth, and verify would have passed from then on.
    const db = new Database(join(dir, 'platform.db'));
    db.prepare('DELETE FROM l_audit WHERE seq > ?').run(3);
    db.close();
    for (let i = 0; i < 5; i++) await record(100 + i);
    clock.advance(60_000);
    await expect(checkpoints.writeIfDue()).rejects.toMatchObject({
      category: 'Conflict',
      message: expect.stringContaining("entry 6's hash differs from the checkpoint"),
      details: { latest: first.name },
    });
    await expect(checkpoints.write({ supersede: '  ' })).rejects.toMatchObject({ category: 'Conflict' });
    expect(sink.names).toEqual([first.name]);
    expect(await checkpoints.check()).toMatchObject({ status: 'failed' });

    clock.advance(1_000);
    const superseding = await checkpoints.write({ supersede: 'restored backup b-17 after disk loss (ticket OPS-4411)' });
    expect(superseding.checkpoint).toMatchObject({
      entry_count: 8,
      tip_seq: 8,
      supersedes: {
        name: first.name,
        entry_count: 6,
        tip_hash: first.checkpoint.tip_hash,
        failure: expect.stringContaining("entry 6's hash differs"),
        reason: 'restored backup b-17 after disk loss (ticket OPS-4411)',
      },
    });
    // The reason is inside the signed statement, and the replaced checkpoint stays in the sink.
    expect(await checkpoints.check()).toMatchObject({ status: 'verified', checkpoint: { signature_valid: true, supersedes: { name: first.name } } });
    expect(sink.names).toEqual([first.name, superseding.name]);
    // A healthy chain needs no reason, and a reason given anyway is not recorded.
    await record(200);
    expect((await checkpoints.write({ supersede: 'not needed' })).checkpoint).not.toHaveProperty('supersedes');
  });
});
