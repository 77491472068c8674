import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import {
  createAuditTrail,
  createVault,
  PlatformError,
  systemClock,
  type AuditTrail,
  type Vault,
} from '@agent-platform/domain';
import type { Doc, Store } from '@agent-platform/store';
import { openEmbeddedStore, storeSnapshotsOf } from '@agent-platform/store/embedded';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { extractArchive, writeArchive } from './backup-files.ts';
import {
  MAC_MEMBER,
  MANIFEST_MEMBER,
  manifestMac,
  STORE_MEMBER,
  type BackupManifest,
} from './backup-manifest.ts';
import { createBackupService, type BackupService } from './backup-service.ts';
import type { BackupSigner, TrustedBackupKey } from './backup-signing.ts';
import { installationIdOf } from './installation.ts';

type Named = Doc & { name: string };
const ADMIN = { identity: 'ops', role: 'operator' };

interface Platform {
  dir: string;
  store: Store;
  audit: AuditTrail;
  vault: Vault;
  backups: BackupService;
  key: Buffer;
  restored: string[];
  /** The public half of its backup signing key, as another platform's [backup] trusted_keys holds it. */
  publicKey: TrustedBackupKey;
  trusted: TrustedBackupKey[];
}

function signingKey(): { signer: BackupSigner; publicKey: TrustedBackupKey } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const keyId = `sha256:${createHash('sha256')
    .update(publicKey.export({ format: 'der', type: 'spki' }))
    .digest('hex')
    .slice(0, 32)}`;
  return {
    signer: { keyId, sign: (bytes) => sign(null, bytes, privateKey).toString('base64url') },
    publicKey: { key_id: keyId, key: publicKey },
  };
}

let root: string;
const platforms: Platform[] = [];
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'ap-backup-svc-'));
});
afterEach(async () => {
  for (const p of platforms.splice(0)) await p.store.close();
  await rm(root, { recursive: true, force: true });
});

async function platform(
  name: string,
  key: Buffer = randomBytes(32),
  withSnapshots = true,
): Promise<Platform> {
  const dir = join(root, name);
  const store = await openEmbeddedStore({ path: join(dir, 'platform.db') });
  const audit = createAuditTrail({ store, clock: systemClock, enabled: true });
  const restored: string[] = [];
  const { signer, publicKey } = signingKey();
  const trusted: TrustedBackupKey[] = [];
  const backups = createBackupService({
    dataDir: dir,
    store,
    snapshots: withSnapshots ? storeSnapshotsOf(store) : null,
    vaultKey: key,
    clock: systemClock,
    version: '0.1.0',
    audit,
    afterRestore: async (scope) => {
      restored.push(scope);
      return null;
    },
    signer,
    trusted: () => trusted,
    // The tests' archives are files under the test's root directory.
    importDirs: () => [root],
  });
  const p = {
    dir,
    store,
    audit,
    vault: createVault({ store, clock: systemClock, key }),
    backups,
    key,
    restored,
    publicKey,
    trusted,
  };
  platforms.push(p);
  return p;
}

async function seed(p: Platform, tag: string): Promise<void> {
  await p.store.collection<Named>('agents').upsert({ id: `agent-${tag}`, name: tag });
  await p.store.collection<Named>('api_keys').upsert({ id: `key-${tag}`, name: tag });
  await p.vault.put(`secret-${tag}`, `value of ${tag}`);
  await p.audit.record({
    category: 'audit',
    identity: 'ops',
    role: 'admin',
    action: `seed ${tag}`,
    target: tag,
    result: 'recorded',
  });
  await p.store.counters.add(`agent:agent-${tag}:received`, 1);
}

/** What a user would compare before and after a refused restore. */
async function state(p: Platform) {
  return {
    agents: (await p.store.collection<Named>('agents').find()).map((r) => r.doc.id),
    keys: (await p.store.collection<Named>('api_keys').find()).map((r) => r.doc.id),
    vault: (await p.vault.list()).map((e) => e.key),
    audit: await p.audit.count(),
    counters: await p.store.counters.list(''),
  };
}

async function refusal(promise: Promise<unknown>): Promise<PlatformError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PlatformError);
  return error as PlatformError;
}

/** Rewrites an archive from its parts, for damage that keeps the tar and gzip intact. */
async function rebuild(
  p: Platform,
  path: string,
  change: {
    manifest?: (m: BackupManifest) => BackupManifest;
    db?: (bytes: Buffer) => Buffer;
    resign?: boolean;
  },
) {
  const staging = join(root, `rebuild-${Math.random()}`);
  const archive = await extractArchive(path, staging);
  const manifest = change.manifest?.(structuredClone(archive.manifest)) ?? archive.manifest;
  const manifestBytes = Buffer.from(JSON.stringify(manifest));
  const db = (change.db ?? ((b) => b))(await readFile(archive.storeFile));
  const mac = change.resign === false ? archive.mac : manifestMac(p.key, manifestBytes);
  const out = join(root, `rebuilt-${Math.random()}`);
  const { path: written } = await writeArchive(out, manifest.id, [
    { name: MANIFEST_MEMBER, bytes: manifestBytes },
    { name: MAC_MEMBER, bytes: Buffer.from(mac) },
    { name: STORE_MEMBER, bytes: db },
  ]);
  return written;
}

describe('backup service', () => {
  it('creates an archive, lists it, and a full restore brings the whole state back with its own audit entry', async () => {
    const p = await platform('a');
    await seed(p, 'one');
    const made = await p.backups.create('full', ADMIN);
    expect(made).toMatchObject({
      scope: 'full',
      path: join(p.dir, 'backups', `${made.id}.tar.gz`),
      audit_entry_count: 1,
    });
    expect(made.checksum).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect((await readFile(`${made.path}.sha256`, 'utf8')).startsWith(made.checksum.slice(7))).toBe(true);
    expect(await p.backups.list()).toEqual([made]);
    // Vault values stay sealed in the archive, and the vault key is not in it.
    const content = gunzipSync(await readFile(made.path));
    expect(content.includes('value of one')).toBe(false);
    expect(content.includes(p.key.toString('base64'))).toBe(false);
    expect(content.includes(p.key)).toBe(false);
    const atBackup = await state(p);

    await seed(p, 'two');
    const restored = await p.backups.restore({ kind: 'id', id: made.id }, ADMIN);
    // The archive's one entry (the backup.create entry was recorded after the copy), then the restore's.
    expect(restored).toMatchObject({
      status: 'restored',
      id: made.id,
      scope: 'full',
      audit_entry_count: 2,
      checksum: made.checksum,
    });
    expect(await state(p)).toEqual(atBackup);
    expect(await p.vault.resolve('secret-one')).toBe('value of one');
    const entries = await p.audit.query({ limit: 5 });
    expect(entries[0]).toMatchObject({
      action: 'backup.restore',
      target: made.id,
      metadata: { scope: 'full', previous_entry_count: 3 },
    });
    expect(await p.audit.verify({ full: true })).toMatchObject({ valid: true, entry_count: 2 });
    expect(p.restored).toEqual(['full']);
  });

  it('an agents_only archive holds and restores the agents alone', async () => {
    const p = await platform('a');
    await seed(p, 'one');
    const made = await p.backups.create('agents_only', ADMIN);
    expect(made.audit_entry_count).toBeNull();
    expect(Object.keys(made.documents)).toEqual(['agents']);
    await seed(p, 'two');
    await p.backups.restore({ kind: 'id', id: made.id }, ADMIN);
    const after = await state(p);
    expect(after.agents).toEqual(['agent-one']);
    expect(after.keys).toEqual(['key-one', 'key-two']);
    expect(after.vault).toEqual(['secret-one', 'secret-two']);
    expect(Object.keys(after.counters).filter((k) => k.startsWith('agent:'))).toEqual([
      'agent:agent-one:received',
    ]);
    const actions = (await p.audit.query({ limit: 2 })).map((e) => `${e.action} ${e.result}`);
    expect(actions).toEqual(['backup.restore success', 'backup.restore started']);
  });

  it('refuses damaged, truncated, altered, wrong-format and foreign archives, changing nothing', async () => {
    const p = await platform('a');
    await seed(p, 'one');
    const made = await p.backups.create('full', ADMIN);
    await seed(p, 'two');
    const before = await state(p);
    const bytes = await readFile(made.path);

    const flipped = join(root, 'flipped.tar.gz');
    const copy = Buffer.from(bytes);
    copy[Math.floor(copy.length / 2)]! ^= 0xff;
    await writeFile(flipped, copy);
    expect((await refusal(p.backups.restore({ kind: 'path', path: flipped }, ADMIN))).message).toMatch(
      /damaged or not a backup/,
    );
    // The listed archive itself, flipped in place: its recorded checksum no longer matches.
    await writeFile(made.path, copy);
    expect((await refusal(p.backups.restore({ kind: 'id', id: made.id }, ADMIN))).message).toMatch(
      /recorded when it was made/,
    );
    await writeFile(made.path, bytes);

    const cut = join(root, 'cut.tar.gz');
    await writeFile(cut, bytes);
    await truncate(cut, Math.floor(bytes.length * 0.6));
    expect((await refusal(p.backups.restore({ kind: 'path', path: cut }, ADMIN))).message).toMatch(/damaged/);

    const wrongGiven = await refusal(
      p.backups.restore({ kind: 'id', id: made.id }, ADMIN, { checksum: `sha256:${'0'.repeat(64)}` }),
    );
    expect(wrongGiven.message).toMatch(/not the sha256:0{64} given/);
    // A refusal never names the hash it computed of the file.
    expect(wrongGiven.message).not.toContain(made.checksum);

    // A member swapped for another database, the manifest left as it was.
    const swapped = await rebuild(p, made.path, { db: (db) => Buffer.concat([db, Buffer.alloc(4096)]) });
    expect((await refusal(p.backups.restore({ kind: 'path', path: swapped }, ADMIN))).message).toMatch(
      /does not match the manifest/,
    );

    const future = await rebuild(p, made.path, {
      manifest: (m) => ({ ...m, format: 'agent-platform-backup/9' }),
    });
    expect((await refusal(p.backups.restore({ kind: 'path', path: future }, ADMIN))).message).toMatch(
      /reads agent-platform-backup\/1 only/,
    );

    const altered = await rebuild(p, made.path, {
      manifest: (m) => ({ ...m, created_at: '2020-01-01T00:00:00.000Z' }),
      resign: false,
    });
    expect((await refusal(p.backups.restore({ kind: 'path', path: altered }, ADMIN))).message).toMatch(
      /altered after it was made/,
    );

    const newer = await rebuild(p, made.path, { manifest: (m) => ({ ...m, platform_version: '9.0.0' }) });
    expect((await refusal(p.backups.restore({ kind: 'path', path: newer }, ADMIN))).message).toMatch(
      /newer than this one/,
    );

    const other = await platform('b');
    await seed(other, 'stranger');
    const theirs = await other.backups.create('full', ADMIN);
    const foreign = await refusal(
      p.backups.restore({ kind: 'path', path: theirs.path }, ADMIN, { allowForeign: true }),
    );
    expect(foreign).toMatchObject({ category: 'Conflict' });
    expect(foreign.message).toMatch(/made with another vault key/);

    expect(await state(p)).toEqual(before);
    expect(await p.audit.verify({ full: true })).toMatchObject({ valid: true });
    expect(p.restored).toEqual([]);
  });

  it('another installation on the same vault key needs allow_foreign, and a foreign agents_only archive goes in with it', async () => {
    const key = randomBytes(32);
    const p = await platform('a', key);
    const twin = await platform('twin', key);
    await seed(twin, 'twin');
    const full = await twin.backups.create('full', ADMIN);
    await p.backups.create('full', ADMIN);
    const refused = await refusal(p.backups.restore({ kind: 'path', path: full.path }, ADMIN));
    expect(refused.message).toMatch(/not this one .* allow_foreign/);
    await p.backups.restore({ kind: 'path', path: full.path }, ADMIN, { allowForeign: true });
    // A full restore makes this platform the archive's installation.
    expect(await installationIdOf(p.store)).toBe(full.installation_id);

    const stranger = await platform('stranger');
    await seed(stranger, 'migrated');
    const agents = await stranger.backups.create('agents_only', ADMIN);
    expect((await refusal(p.backups.restore({ kind: 'path', path: agents.path }, ADMIN))).message).toMatch(
      /another vault key/,
    );
    // Foreign and signed by a key not trusted here: refused even with allow_foreign.
    const untrusted = await refusal(
      p.backups.restore({ kind: 'path', path: agents.path }, ADMIN, { allowForeign: true }),
    );
    expect(untrusted).toMatchObject({ category: 'Conflict' });
    expect(untrusted.message).toMatch(/trusted_keys/);
    p.trusted.push(stranger.publicKey);
    await p.backups.restore({ kind: 'path', path: agents.path }, ADMIN, { allowForeign: true });
    expect((await state(p)).agents).toEqual(['agent-migrated']);
  });

  it('takes an uploaded archive into the backups directory once it reads back whole', async () => {
    const source = await platform('source');
    await seed(source, 'one');
    const made = await source.backups.create('full', ADMIN);
    const p = await platform('a', source.key);
    const uploaded = await p.backups.upload(Readable.from([await readFile(made.path)]), made.checksum);
    expect(uploaded).toMatchObject({
      id: made.id,
      checksum: made.checksum,
      path: join(p.dir, 'backups', `${made.id}.tar.gz`),
    });
    expect(await p.backups.upload(Readable.from([await readFile(made.path)]))).toEqual(uploaded);
    const damagedUpload = refusal(
      p.backups.upload(Readable.from([(await readFile(made.path)).subarray(0, 100)])),
    );
    expect((await damagedUpload).message).toMatch(/damaged/);
    expect((await p.backups.list()).map((b) => b.id)).toEqual([made.id]);
  });

  it('answers a clear conflict on a store without snapshots (MongoDB)', async () => {
    const p = await platform('mongo-like', randomBytes(32), false);
    const error = await refusal(p.backups.create('full', ADMIN));
    expect(error).toMatchObject({ category: 'Conflict' });
    expect(error.message).toMatch(/Backing up a fleet on MongoDB/);
  });
});
