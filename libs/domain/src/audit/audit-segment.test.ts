import { generateKeyPairSync, sign } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { systemClock } from '../time/clock.ts';
import type { StoredAuditEntry } from './audit-chain.ts';
import { ED25519_SPKI_PREFIX, parseSignedCheckpoint, signCheckpoint, type AuditCheckpoint, type CheckpointSigner } from './audit-checkpoint.ts';
import { CHAIN_ANCHOR } from './audit-hash.ts';
import { exportSegment, verifySegment } from './audit-segment.ts';
import { createAuditTrail } from './audit-trail.ts';

function testSigner(): CheckpointSigner {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(ED25519_SPKI_PREFIX.length);
  return {
    keyId: 'sha256:test',
    publicKey: `ed25519:${raw.toString('base64url')}`,
    publicKeyPem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
    sign: (bytes) => sign(null, bytes, privateKey).toString('base64url'),
  };
}

let dir: string;
let store: Store;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-segment-'));
  store = await openEmbeddedStore({ path: join(dir, 'platform.db') });
  const audit = createAuditTrail({ store, clock: systemClock, enabled: true });
  for (let i = 1; i <= 5; i++) await audit.record({ category: 'audit', identity: 'u', role: 'admin', action: `a${i}`, target: '-', result: 'ok', metadata: { i } });
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const log = () => store.log<StoredAuditEntry>('audit', { indexes: ['category', 'identity', 'timestamp'] });

async function checkpointAt(seq: number, signer: CheckpointSigner): Promise<ReturnType<typeof signCheckpoint>> {
  const [entry] = await log().scan(seq, 1);
  const checkpoint: AuditCheckpoint = { entry_count: seq, tip_seq: seq, tip_hash: entry!.hash, at: '2026-11-25T12:00:00.000Z', key_id: signer.keyId };
  return signCheckpoint(checkpoint, signer);
}

describe('audit segments against a checkpoint', () => {
  it('verifies a whole segment, and a later segment that reaches the checkpoint', async () => {
    const signer = testSigner();
    const cp = await checkpointAt(4, signer);
    const whole = await exportSegment(log(), 1, null);
    expect(whole.prev_hash).toBe(CHAIN_ANCHOR);
    expect(await verifySegment(whole, cp, signer.publicKey)).toEqual({ valid: true, checked_entries: 5 });
    const tail = await exportSegment(log(), 3, 4);
    expect(tail.entries.map((e) => e.seq)).toEqual([3, 4]);
    expect(await verifySegment(tail, cp, signer.publicKeyPem)).toEqual({ valid: true, checked_entries: 2 });
  });

  it('refuses a gap, a segment that starts after the checkpoint, a foreign key and a malformed checkpoint file', async () => {
    const signer = testSigner();
    const cp = await checkpointAt(2, signer);
    const whole = await exportSegment(log(), 1, null);
    const gap = { ...whole, entries: whole.entries.filter((e) => e.seq !== 3) };
    expect(await verifySegment(gap, cp, signer.publicKey)).toMatchObject({ valid: false, reason: 'seq gap: expected seq 3, found 4 (entries removed)' });
    const late = await exportSegment(log(), 4, null);
    expect(await verifySegment(late, cp, signer.publicKey)).toMatchObject({ valid: false, reason: 'the segment starts at seq 4, after the checkpoint\'s tip (seq 2)' });
    expect(await verifySegment(whole, cp, testSigner().publicKey)).toMatchObject({ valid: false, reason: 'checkpoint signature does not verify' });
    expect(parseSignedCheckpoint('{"checkpoint":{"entry_count":-1}}')).toMatch(/malformed/);
    expect(parseSignedCheckpoint('nope')).toBe('the checkpoint is not JSON');
  });

  it('accepts a checkpoint of an empty chain against any segment from seq 1', async () => {
    const signer = testSigner();
    const empty = signCheckpoint({ entry_count: 0, tip_seq: 0, tip_hash: null, at: '2026-11-25T12:00:00.000Z', key_id: signer.keyId }, signer);
    expect(await verifySegment(await exportSegment(log(), 1, null), empty, signer.publicKey)).toEqual({ valid: true, checked_entries: 5 });
  });
});
