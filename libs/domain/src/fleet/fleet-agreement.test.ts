import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import {
  agreeWithFleet,
  checkFleetAgreement,
  FLEET_ITEMS,
  FleetDisagreementError,
  fleetRecord,
  licenceFingerprint,
  parseFleetAdopt,
  vaultKeyFingerprint,
  type FleetClaim,
  type FleetItem,
} from './fleet-agreement.ts';

// Two handles on one SQLite file are two nodes sharing one store: each its own connection.
let dir: string;
let nodeA: Store;
let nodeB: Store;
const now = () => new Date('2026-03-01T10:00:00.000Z');
const A = { node: 'api@host-a:1', now };
const B = { node: 'api@host-b:2', now };

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fleet-agreement-'));
  nodeA = await openEmbeddedStore({ path: join(dir, 'platform.db') });
  nodeB = await openEmbeddedStore({ path: join(dir, 'platform.db') });
});

afterEach(async () => {
  await nodeA.close();
  await nodeB.close();
  await rm(dir, { recursive: true, force: true });
});

function keyId(): string {
  // The public key id of a fresh Ed25519 key, shaped like registry-core's (`sha256:` + 32 hex).
  const { publicKey } = generateKeyPairSync('ed25519');
  return `sha256:${Buffer.from(publicKey.export({ format: 'der', type: 'spki' })).toString('hex').slice(-32)}`;
}

/** Two different values of each item, as the boot builds its claims. */
const makers: Record<FleetItem, () => FleetClaim> = {
  vault_key: () => ({ item: 'vault_key', fingerprint: vaultKeyFingerprint(randomBytes(32)), fix: 'the environment variable AP_VAULT_KEY ([vault] key_env)' }),
  audit_checkpoint_key: () => ({ item: 'audit_checkpoint_key', fingerprint: keyId(), fix: '[audit.checkpoints] signing_key_file' }),
  backup_signing_key: () => ({ item: 'backup_signing_key', fingerprint: keyId(), fix: '[backup] signing_key_file' }),
  registry_signing_key: () => ({ item: 'registry_signing_key', fingerprint: keyId(), fix: '[registry] signing_key_file' }),
  licence: () => ({ item: 'licence', fingerprint: licenceFingerprint(randomBytes(40).toString('base64url')), issuedAt: 1_700_000_000, fix: '[licence] file (and public_key_file)' }),
};

describe.each(Object.keys(FLEET_ITEMS) as FleetItem[])('the fleet agrees on the %s', (item) => {
  it('boots both nodes holding the same value; the first records it', async () => {
    const claim = makers[item]();
    expect(await checkFleetAgreement(nodeA, [claim], A)).toMatchObject([{ item, outcome: 'recorded' }]);
    expect(await checkFleetAgreement(nodeB, [claim], B)).toMatchObject([{ item, outcome: 'agreed', fleet: { fingerprint: claim.fingerprint, recorded_by: A.node } }]);
    // And again after a restart of the first.
    expect(await checkFleetAgreement(nodeA, [claim], A)).toMatchObject([{ outcome: 'agreed' }]);
  });

  it('refuses the second node holding another value, naming the item, both fingerprints and the fix', async () => {
    const first = makers[item]();
    const other = makers[item]();
    await checkFleetAgreement(nodeA, [first], A);
    const refused = await checkFleetAgreement(nodeB, [other], B).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(FleetDisagreementError);
    const message = (refused as Error).message;
    expect(message).toContain('refuses to start');
    expect(message).toContain(`${FLEET_ITEMS[item].label}: this node's ${FLEET_ITEMS[item].label} (${other.fingerprint}`);
    expect(message).toContain(`the fleet's (${first.fingerprint}`);
    expect(message).toContain(`recorded by ${A.node}`);
    expect(message).toContain(`fix: set ${other.fix} to the fleet's ${FLEET_ITEMS[item].label} on this node`);
    expect(message).toContain(`AP_FLEET_ADOPT=${item}`);
    // The record is untouched: the first node still agrees.
    expect((await fleetRecord(nodeB, item))?.fingerprint).toBe(first.fingerprint);
    expect(await checkFleetAgreement(nodeA, [first], A)).toMatchObject([{ outcome: 'agreed' }]);
  });

  it('agrees on one value when the first boots race', async () => {
    for (let round = 0; round < 5; round++) {
      await nodeA.collection('fleet_agreement').delete(item);
      const [a, b] = [makers[item](), makers[item]()];
      const results = await Promise.all([agreeWithFleet(nodeA, a, A), agreeWithFleet(nodeB, b, B)]);
      const recorded = results.filter((r) => 'outcome' in r && r.outcome === 'recorded');
      const refused = results.filter((r) => !('outcome' in r));
      expect(recorded).toHaveLength(1);
      expect(refused).toHaveLength(1);
      const winner = recorded[0]!.fleet.fingerprint;
      expect((await fleetRecord(nodeA, item))?.fingerprint).toBe(winner);
      expect(refused[0]).toMatchObject({ fleet: { fingerprint: winner } });
      // The same value racing: one records, the other agrees.
      await nodeA.collection('fleet_agreement').delete(item);
      const same = await Promise.all([agreeWithFleet(nodeA, a, A), agreeWithFleet(nodeB, a, B)]);
      expect(same.map((r) => ('outcome' in r ? r.outcome : 'refused')).sort()).toEqual(['agreed', 'recorded']);
    }
  });

  it('lets one node replace the record when told to (AP_FLEET_ADOPT), after which the old value is refused', async () => {
    const old = makers[item]();
    const rotated = makers[item]();
    await checkFleetAgreement(nodeA, [old], A);
    expect(await checkFleetAgreement(nodeB, [rotated], { ...B, adopt: new Set([item]) })).toMatchObject([
      { outcome: 'adopted', replaced: old.fingerprint, fleet: { fingerprint: rotated.fingerprint, recorded_by: B.node } },
    ]);
    await expect(checkFleetAgreement(nodeA, [old], A)).rejects.toThrow(FleetDisagreementError);
    expect(await checkFleetAgreement(nodeA, [rotated], A)).toMatchObject([{ outcome: 'agreed' }]);
  });
});

describe('fingerprints and messages', () => {
  it('never contain the vault key (base64, hex) and differ per key', async () => {
    const key = randomBytes(32);
    const fingerprint = vaultKeyFingerprint(key);
    expect(fingerprint).toMatch(/^hmac-sha256:[0-9a-f]{32}$/);
    expect(fingerprint).toBe(vaultKeyFingerprint(Buffer.from(key)));
    expect(fingerprint).not.toBe(vaultKeyFingerprint(randomBytes(32)));
    await checkFleetAgreement(nodeA, [{ item: 'vault_key', fingerprint, fix: 'AP_VAULT_KEY' }], A);
    const other = randomBytes(32);
    const message = ((await checkFleetAgreement(nodeB, [{ item: 'vault_key', fingerprint: vaultKeyFingerprint(other), fix: 'AP_VAULT_KEY' }], B).catch((e: unknown) => e)) as Error).message;
    for (const k of [key, other]) {
      expect(message).not.toContain(k.toString('base64'));
      expect(message).not.toContain(k.toString('hex'));
      expect(message).not.toContain(k.toString('hex').slice(0, 16));
    }
  });

  it('reports every disagreeing item of one boot, and writes nothing for the items that agree', async () => {
    const vault = makers.vault_key();
    const checkpoint = makers.audit_checkpoint_key();
    const backup = makers.backup_signing_key();
    await checkFleetAgreement(nodeA, [vault, checkpoint, backup], A);
    const error = (await checkFleetAgreement(nodeB, [vault, makers.audit_checkpoint_key(), makers.backup_signing_key()], B).catch((e: unknown) => e)) as FleetDisagreementError;
    expect(error.disagreements.map((d) => d.item)).toEqual(['audit_checkpoint_key', 'backup_signing_key']);
    expect(error.problems).toHaveLength(2);
  });

  it('parses AP_FLEET_ADOPT and refuses an unknown item', () => {
    expect([...parseFleetAdopt(' audit_checkpoint_key, backup_signing_key ,')]).toEqual(['audit_checkpoint_key', 'backup_signing_key']);
    expect(parseFleetAdopt(undefined).size).toBe(0);
    expect(() => parseFleetAdopt('vault-key')).toThrow("AP_FLEET_ADOPT: unknown item 'vault-key'; known: vault_key, audit_checkpoint_key");
  });
});

describe('licence renewal, rolled out node by node', () => {
  const licence = (token: string, iat: number): FleetClaim => ({ item: 'licence', fingerprint: licenceFingerprint(token), issuedAt: iat, fix: '[licence] file (and public_key_file)' });
  const current = licence('eyJ.current.sig', 1_700_000_000);
  const renewed = licence('eyJ.renewed.sig', 1_700_086_400);

  it('a newer licence (by iat) replaces the record; a node still on the older one is then refused, saying so', async () => {
    await checkFleetAgreement(nodeA, [current], A);
    expect(await checkFleetAgreement(nodeB, [renewed], B)).toMatchObject([
      { outcome: 'renewed', replaced: current.fingerprint, fleet: { fingerprint: renewed.fingerprint, issued_at: renewed.issuedAt } },
    ]);
    const message = ((await checkFleetAgreement(nodeA, [current], A).catch((e: unknown) => e)) as Error).message;
    expect(message).toContain(`licence: this node's licence (${current.fingerprint}, issued 2023-11-14T22:13:20.000Z) is older than the fleet's (${renewed.fingerprint}, issued 2023-11-15T22:13:20.000Z, recorded by ${B.node}`);
    expect(message).toContain("fix: set [licence] file (and public_key_file) to the fleet's licence on this node");
    // Node A given the renewed file agrees.
    expect(await checkFleetAgreement(nodeA, [renewed], A)).toMatchObject([{ outcome: 'agreed' }]);
  });

  it('another licence issued at the same instant is refused (not a renewal)', async () => {
    await checkFleetAgreement(nodeA, [current], A);
    const twin = licence('eyJ.twin.sig', current.issuedAt!);
    const message = ((await checkFleetAgreement(nodeB, [twin], B).catch((e: unknown) => e)) as Error).message;
    expect(message).toContain(`this node's licence (${twin.fingerprint}, issued 2023-11-14T22:13:20.000Z) differs from the fleet's (${current.fingerprint}`);
  });

  it('two nodes renewing at once both end on the renewed licence', async () => {
    await checkFleetAgreement(nodeA, [current], A);
    const results = await Promise.all([checkFleetAgreement(nodeA, [renewed], A), checkFleetAgreement(nodeB, [renewed], B)]);
    expect(results.map(([r]) => r!.outcome).sort()).toEqual(['agreed', 'renewed']);
    expect((await fleetRecord(nodeA, 'licence'))?.fingerprint).toBe(renewed.fingerprint);
  });
});
