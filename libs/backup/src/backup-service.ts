import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { BackupRestored, BackupScope, BackupView } from '@agent-platform/contracts';
import { Errors, type AuditTrail, type Clock } from '@agent-platform/domain';
import type { Store, StoreSnapshots } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { archiveVerdict, type ArchiveSource, type VerifiedArchive } from './archive-verdict.ts';
import { importablePath } from './archive-paths.ts';
import {
  archiveIds,
  archivePath,
  BACKUPS_DIR,
  readManifest,
  recordedChecksum,
  removeStalePartials,
  sha256File,
  writeArchive,
} from './backup-files.ts';
import {
  BACKUP_FORMAT,
  MAC_MEMBER,
  MANIFEST_MEMBER,
  manifestMac,
  SIG_MEMBER,
  STORE_MEMBER,
  vaultKeyId,
  type BackupManifest,
} from './backup-manifest.ts';
import { signatureMember, type BackupSigner, type TrustedBackupKey } from './backup-signing.ts';
import { importUpload } from './backup-upload.ts';
import { KEEP_HIGHER_COUNTER_PREFIXES, storePartOf } from './backup-scopes.ts';
import { ensureInstallationId } from './installation.ts';
import { readChain, stampRestore } from './restore-stamp.ts';

export interface BackupServiceDeps {
  /** `[storage] data_dir`: archives go to `<data_dir>/backups` unless `backupsDir` says otherwise. */
  dataDir: string;
  /**
   * `[backup] dir`: the backups directory when set (a volume every api node of a fleet mounts);
   * absent or empty = `<data_dir>/backups`.
   */
  backupsDir?: string;
  store: Store;
  /** The store's snapshots; null on MongoDB (docs/backup.md "Backing up a fleet on MongoDB"). */
  snapshots: StoreSnapshots | null;
  /** The vault key this platform runs with: it keys the archives' MAC. */
  vaultKey: Buffer;
  clock: Clock;
  version: string;
  /** The live trail: backups made and restores are recorded in it. */
  audit: AuditTrail;
  /** After a restore was committed: bring this process's in-memory state in line; returns the checkpoint written, if any. */
  afterRestore?: (scope: BackupScope) => Promise<string | null>;
  /** Signs every archive made (`manifest.sig`), so that platforms trusting its key accept it; absent = unsigned. */
  signer?: BackupSigner;
  /** `[backup] trusted_keys`, read per restore: a foreign archive is accepted only with a signature by one of them. */
  trusted?: () => readonly TrustedBackupKey[];
  /**
   * Where a restore `{path}` may read archives besides the backups directory (`[backup]
   * import_dirs`, read per restore); `'anywhere'` for the offline CLI, whose user owns the host.
   */
  importDirs?: () => readonly string[] | 'anywhere';
  /**
   * The install checks the archive's packages must pass before anything changes (revocations; for
   * a foreign archive also registry signatures): throws the refusal. Absent = none (unit tests).
   */
  checkPackages?: (snapshot: Store, context: { foreign: boolean }) => Promise<void>;
}

/** Who asks, for the audit trail. */
export interface Actor {
  identity: string;
  role: string;
}

export interface RestoreOptions {
  /** `sha256:<hex>` the archive must have. */
  checksum?: string;
  allowForeign?: boolean;
}

export interface BackupService {
  create(scope: BackupScope, actor: Actor): Promise<BackupView>;
  /** Archives in the backups directory, newest first. */
  list(): Promise<BackupView[]>;
  restore(source: ArchiveSource, actor: Actor, options?: RestoreOptions): Promise<BackupRestored>;
  /** Takes an uploaded archive into the backups directory once it reads back whole; answers its listing. */
  upload(body: NodeJS.ReadableStream, checksum?: string): Promise<BackupView>;
}

const MONGODB_PROCEDURE =
  'backups through the platform need the embedded or the PostgreSQL store; with [runtime] store = "mongodb" back up the database with MongoDB\'s tools (docs/backup.md "Backing up a fleet on MongoDB")';

export function newBackupId(now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('.', '');
  return `${stamp}-${randomBytes(4).toString('hex')}`;
}

/** The backup service of one process (docs/backup.md). One backup or restore at a time per process. */
export function createBackupService(deps: BackupServiceDeps): BackupService {
  const dir = deps.backupsDir === undefined || deps.backupsDir === '' ? join(deps.dataDir, BACKUPS_DIR) : deps.backupsDir;
  let tail: Promise<unknown> = Promise.resolve();
  const oneAtATime = <T>(work: () => Promise<T>): Promise<T> => {
    const run = tail.then(work, work);
    tail = run.catch(() => undefined);
    return run;
  };
  const snapshotsOrRefuse = (): StoreSnapshots => {
    if (deps.snapshots === null) throw Errors.conflict(MONGODB_PROCEDURE);
    return deps.snapshots;
  };

  async function view(id: string): Promise<BackupView> {
    const path = archivePath(dir, id);
    const manifest = await readManifest(path);
    const checksum = (await recordedChecksum(dir, id)) ?? (await sha256File(path));
    const { size } = await stat(path);
    return viewOf(manifest, path, checksum, size);
  }

  async function create(scope: BackupScope, actor: Actor): Promise<BackupView> {
    const snapshots = snapshotsOrRefuse();
    const now = deps.clock.now();
    const id = newBackupId(now);
    await removeStalePartials(dir, now.getTime());
    const staged = join(dir, `.${id}.db.partial`);
    try {
      const installation = await ensureInstallationId(deps.store, () => deps.clock.now());
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const summary = await snapshots.snapshot(staged, storePartOf(scope));
      const audit = scope === 'full' ? await readChain(staged) : null;
      const size = (await stat(staged)).size;
      const manifest: BackupManifest = {
        format: BACKUP_FORMAT,
        id,
        scope,
        created_at: now.toISOString(),
        platform_version: deps.version,
        installation_id: installation,
        vault_key_id: vaultKeyId(deps.vaultKey),
        store: summary,
        audit,
        members: [{ name: STORE_MEMBER, size_bytes: size, sha256: await sha256File(staged) }],
      };
      const manifestBytes = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`);
      const written = await writeArchive(dir, id, [
        { name: MANIFEST_MEMBER, bytes: manifestBytes },
        { name: MAC_MEMBER, bytes: Buffer.from(`${manifestMac(deps.vaultKey, manifestBytes)}\n`) },
        ...(deps.signer === undefined
          ? []
          : [{ name: SIG_MEMBER, bytes: signatureMember(deps.signer, manifestBytes) }]),
        { name: STORE_MEMBER, file: staged, size },
      ]);
      await deps.audit.record({
        category: 'system',
        identity: actor.identity,
        role: actor.role,
        action: 'backup.create',
        target: id,
        result: 'success',
        metadata: {
          scope,
          checksum: written.checksum,
          size_bytes: written.size,
          audit_entry_count: audit?.entry_count ?? null,
        },
      });
      return viewOf(manifest, written.path, written.checksum, written.size);
    } finally {
      await rm(staged, { force: true });
    }
  }

  async function resolve(source: ArchiveSource): Promise<{ path: string; recorded: string | null }> {
    if (source.kind === 'id') {
      if (!(await archiveIds(dir)).includes(source.id)) throw Errors.notFound('backup', source.id);
      return { path: archivePath(dir, source.id), recorded: await recordedChecksum(dir, source.id) };
    }
    const allowed = deps.importDirs?.() ?? [];
    const path = await importablePath(source.path, allowed === 'anywhere' ? 'anywhere' : [dir, ...allowed]);
    return { path, recorded: null };
  }

  /**
   * Whether the verified archive may be applied here (docs/backup.md "Foreign archives"); throws
   * the refusal. Returns true for a foreign archive (made with another vault key).
   */
  async function admit(archive: VerifiedArchive, options: RestoreOptions): Promise<boolean> {
    const { manifest } = archive;
    const foreignAllowed = options.allowForeign === true;
    if (archive.altered !== null) throw archive.altered;
    const foreign = !archive.macValid;
    if (foreign) {
      if (!foreignAllowed || manifest.scope !== 'agents_only') throw archive.macRefusal!;
      if (archive.signature.state !== 'trusted') {
        const whose =
          archive.signature.state === 'untrusted' ? `signed by key ${archive.signature.keyId}` : 'unsigned';
        throw Errors.conflict(
          `backup ${manifest.id} is foreign (made with another vault key) and ${whose}, which is not in [backup] trusted_keys: a foreign archive is restored only when signed by a key trusted here (docs/backup.md "Foreign archives")`,
          { archive_vault_key_id: manifest.vault_key_id },
        );
      }
    }
    const installation = await ensureInstallationId(deps.store, () => deps.clock.now());
    if (manifest.installation_id !== installation && !foreignAllowed) {
      throw Errors.conflict(
        `backup ${manifest.id} was made by installation ${manifest.installation_id}, not this one (${installation}); to restore it here anyway, send allow_foreign: true (docs/backup.md "Foreign archives")`,
        { archive_installation_id: manifest.installation_id, installation_id: installation },
      );
    }
    if (deps.checkPackages !== undefined) {
      const snapshot = await openEmbeddedStore({ path: archive.storeFile });
      try {
        await deps.checkPackages(snapshot, { foreign });
      } finally {
        await snapshot.close();
      }
    }
    return foreign;
  }

  async function restore(
    source: ArchiveSource,
    actor: Actor,
    options: RestoreOptions = {},
  ): Promise<BackupRestored> {
    const snapshots = snapshotsOrRefuse();
    await removeStalePartials(dir, deps.clock.now().getTime());
    const staging = join(dir, `.restore-${randomUUID()}.partial`);
    try {
      const { path, recorded } = await resolve(source);
      const archive = await archiveVerdict({
        path,
        staging,
        recorded,
        expected: options.checksum ?? null,
        vaultKey: deps.vaultKey,
        version: deps.version,
        trusted: deps.trusted?.() ?? [],
      });
      const { manifest } = archive;
      await admit(archive, options);
      const restoredAt = deps.clock.now().toISOString();
      const entry = {
        identity: actor.identity,
        role: actor.role,
        id: manifest.id,
        scope: manifest.scope,
        restoredAt,
      };
      let auditCount: number | null = null;
      if (manifest.scope === 'full') {
        // The restore's own entry goes into the restored chain before it is swapped in: the restore
        // and its record are one transaction (docs/backup.md "Audit").
        auditCount = await stampRestore(
          archive.storeFile,
          deps.store,
          deps.clock,
          deps.audit.enabled,
          entry,
          manifest,
        );
      } else {
        await deps.audit.record({
          category: 'system',
          identity: actor.identity,
          role: actor.role,
          action: 'backup.restore',
          target: manifest.id,
          result: 'started',
          metadata: { scope: manifest.scope, archive_created_at: manifest.created_at },
        });
      }
      await snapshots.restore(archive.storeFile, storePartOf(manifest.scope), {
        keepHigherCounterPrefixes: KEEP_HIGHER_COUNTER_PREFIXES,
      });
      if (manifest.scope === 'agents_only') {
        await deps.audit.record({
          category: 'system',
          identity: actor.identity,
          role: actor.role,
          action: 'backup.restore',
          target: manifest.id,
          result: 'success',
          metadata: { scope: manifest.scope, archive_created_at: manifest.created_at },
        });
      }
      const checkpoint = (await deps.afterRestore?.(manifest.scope)) ?? null;
      return {
        status: 'restored',
        id: manifest.id,
        scope: manifest.scope,
        created_at: manifest.created_at,
        restored_at: restoredAt,
        checksum: archive.checksum,
        audit_entry_count: auditCount,
        checkpoint,
      };
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }

  return {
    create: (scope, actor) => oneAtATime(() => create(scope, actor)),
    list: async () => {
      snapshotsOrRefuse();
      const views: BackupView[] = [];
      for (const id of await archiveIds(dir)) {
        // An archive that no longer reads (damaged on disk) is left out of the list; restore by its id names why.
        const listed = await view(id).catch(() => null);
        if (listed !== null) views.push(listed);
      }
      return views;
    },
    restore: (source, actor, options) => oneAtATime(() => restore(source, actor, options)),
    upload: (body, checksum) =>
      oneAtATime(async () => {
        snapshotsOrRefuse();
        const id = await importUpload({
          dir,
          body,
          expected: checksum ?? null,
          vaultKey: deps.vaultKey,
          now: deps.clock.now().getTime(),
        });
        return view(id);
      }),
  };
}

function viewOf(manifest: BackupManifest, path: string, checksum: string, size: number): BackupView {
  return {
    id: manifest.id,
    path,
    scope: manifest.scope,
    created_at: manifest.created_at,
    checksum,
    size_bytes: size,
    platform_version: manifest.platform_version,
    installation_id: manifest.installation_id,
    audit_entry_count: manifest.audit?.entry_count ?? null,
    documents: manifest.store.collections,
  };
}
