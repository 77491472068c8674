import { readFile, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  createBackupService,
  installationIdOf,
  verifyArchiveFile,
  type BackupService,
} from '@agent-platform/backup';
import { decodeVaultKey, VAULT_KEY_FILE } from '@agent-platform/config';
import type { BackupScope, BackupView } from '@agent-platform/contracts';
import { createAuditTrail, forgetFleetAgreement, PlatformError, systemClock } from '@agent-platform/domain';
import { platformVersion } from '@agent-platform/engines';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore, StoreInUseError, storeSnapshotsOf } from '@agent-platform/store/embedded';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, type CliIo, type CommandGroup } from './command.ts';

const USAGE = `Usage:
  agent-platform backup create --data-dir <dir> [--scope full|agents_only] [--vault-key-file <file>]
      Archives the embedded store of <dir> ([storage] data_dir) into <dir>/backups, like
      POST /backup/create. Safe while the platform runs.
  agent-platform backup list --data-dir <dir>
      The archives in <dir>/backups, newest first.
  agent-platform backup verify [--vault-key-file <file>] [--checksum sha256:<hex>] <archive>
      Reads the archive completely: checksum, members, format, the store snapshot, the audit
      chain inside it; with the vault key, also whether that key made it. Changes nothing.
  agent-platform backup restore --data-dir <dir> [--vault-key-file <file>] [--checksum sha256:<hex>]
      [--allow-foreign] <archive>
      Replaces the state of <dir> with the archive's, in one transaction, with every platform
      process on <dir> stopped (refused while one runs). Into a new or empty <dir> it needs the
      original platform's vault key, which it writes to <dir>/vault.key when <dir> has none.

The vault key is --vault-key-file, else $AP_VAULT_KEY (base64), else <dir>/vault.key.
docs/backup.md. Exit status: 0 done (verify: sound), 1 failed or refused, 2 bad command line.`;

class UsageError extends Error {}

const CLI_ACTOR = { identity: 'cli', role: 'admin' };

/** `agent-platform backup ...`: offline backups and restores of an embedded store. */
export const backupCommand: CommandGroup = {
  summary: 'create, list, verify or restore backups of a data dir (offline restore)',
  usage: USAGE,
  async run(args, io) {
    const [sub, ...rest] = args;
    try {
      if (sub === 'create') return await createCommand(rest, io);
      if (sub === 'list') return await listCommand(rest, io);
      if (sub === 'verify') return await verifyCommand(rest, io);
      if (sub === 'restore') return await restoreCommand(rest, io);
      if (sub === '--help' || sub === '-h' || sub === 'help') {
        io.out(USAGE);
        return EXIT_OK;
      }
      throw new UsageError(
        sub === undefined ? 'missing action (create, list, verify or restore)' : `unknown action '${sub}'`,
      );
    } catch (error) {
      if (
        error instanceof UsageError ||
        (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') === true
      ) {
        io.err(`agent-platform backup: ${(error as Error).message}`);
        io.err(USAGE);
        return EXIT_USAGE;
      }
      io.err(`agent-platform backup: ${error instanceof Error ? error.message : String(error)}`);
      return EXIT_FAILED;
    }
  },
};

const OPTIONS = {
  'data-dir': { type: 'string' },
  scope: { type: 'string' },
  'vault-key-file': { type: 'string' },
  checksum: { type: 'string' },
  'allow-foreign': { type: 'boolean' },
} as const;

function parse(args: readonly string[]) {
  return parseArgs({ args: [...args], options: OPTIONS, strict: true, allowPositionals: true });
}

function dataDirOf(values: { 'data-dir'?: string }, cwd: string): string {
  if (values['data-dir'] === undefined) throw new UsageError('needs --data-dir <dir>');
  return resolve(cwd, values['data-dir']);
}

/** The key the platform on `dataDir` runs with (or will): the file given, $AP_VAULT_KEY, or `<dir>/vault.key`. */
async function vaultKeyOf(
  values: { 'vault-key-file'?: string },
  io: CliIo,
  dataDir: string | null,
): Promise<{ key: Buffer; source: string } | null> {
  const read = async (path: string): Promise<Buffer> => {
    const key = decodeVaultKey(await readFile(path, 'utf8'));
    if (key === null) throw new Error(`${path}: not a vault key (the base64 encoding of 32 bytes)`);
    return key;
  };
  if (values['vault-key-file'] !== undefined) {
    const path = resolve(io.cwd, values['vault-key-file']);
    return { key: await read(path), source: path };
  }
  const fromEnv = io.env?.AP_VAULT_KEY;
  if (fromEnv !== undefined && fromEnv !== '') {
    const key = decodeVaultKey(fromEnv);
    if (key === null) throw new Error('AP_VAULT_KEY: not a vault key (the base64 encoding of 32 bytes)');
    return { key, source: 'AP_VAULT_KEY' };
  }
  if (dataDir === null) return null;
  const path = join(dataDir, VAULT_KEY_FILE);
  return (await stat(path).catch(() => null)) === null ? null : { key: await read(path), source: path };
}

function service(store: Store, dataDir: string, vaultKey: Buffer): BackupService {
  return createBackupService({
    dataDir,
    store,
    snapshots: storeSnapshotsOf(store),
    vaultKey,
    clock: systemClock,
    version: platformVersion(),
    audit: createAuditTrail({ store, clock: systemClock, enabled: true }),
    // Offline, the operator owns the host: any archive file they name (docs/backup.md "Into a new data dir").
    importDirs: () => 'anywhere',
  });
}

function describe(view: BackupView): string {
  return `${view.id}  ${view.scope.padEnd(11)}  ${view.created_at}  ${view.size_bytes} bytes  ${view.checksum}  ${view.path}`;
}

async function createCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args);
  if (positionals.length > 0)
    throw new UsageError(`create takes no arguments (got ${positionals.join(' ')})`);
  const dataDir = dataDirOf(values, io.cwd);
  const scope = (values.scope ?? 'full') as BackupScope;
  if (scope !== 'full' && scope !== 'agents_only')
    throw new UsageError(`--scope must be full or agents_only, not '${values.scope}'`);
  const key = await vaultKeyOf(values, io, dataDir);
  if (key === null)
    throw new Error(
      `no vault key: ${join(dataDir, VAULT_KEY_FILE)} does not exist; give --vault-key-file or set AP_VAULT_KEY`,
    );
  const store = await openEmbeddedStore({ path: join(dataDir, 'platform.db') });
  try {
    io.out(describe(await service(store, dataDir, key.key).create(scope, CLI_ACTOR)));
    return EXIT_OK;
  } finally {
    await store.close();
  }
}

async function listCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parse(args);
  const dataDir = dataDirOf(values, io.cwd);
  const store = await openEmbeddedStore({ path: join(dataDir, 'platform.db') });
  try {
    for (const view of await service(store, dataDir, Buffer.alloc(32)).list()) io.out(describe(view));
    return EXIT_OK;
  } finally {
    await store.close();
  }
}

async function verifyCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args);
  const [archive, ...extra] = positionals;
  if (archive === undefined || extra.length > 0) throw new UsageError('verify takes one <archive>');
  const key = await vaultKeyOf(values, io, null);
  try {
    const report = await verifyArchiveFile(resolve(io.cwd, archive), {
      vaultKey: key?.key ?? null,
      checksum: values.checksum ?? null,
      version: platformVersion(),
    });
    const { manifest } = report;
    io.out(
      `archive:  ${manifest.id} (${manifest.scope}), made ${manifest.created_at} by platform ${manifest.platform_version}, installation ${manifest.installation_id}`,
    );
    io.out(`checksum: ${report.checksum} (${report.size} bytes); every member matches the manifest`);
    const documents = Object.values(report.summary.collections).reduce((a, b) => a + b, 0);
    io.out(
      `store:    ${Object.keys(report.summary.collections).length} collections, ${documents} documents, ${report.summary.counters} counters`,
    );
    if (report.chain !== null) {
      io.out(
        `audit:    ${report.chain.entry_count} entries, ${report.chain.valid ? 'the chain verifies' : `the chain does NOT verify: ${report.chain.reason ?? 'broken'}`}`,
      );
    }
    const mac = {
      valid: `made with the vault key of ${key?.source}`,
      foreign: `made with another vault key (${manifest.vault_key_id}), not the one of ${key?.source}`,
      altered: `its manifest was ALTERED after it was made (the MAC does not verify with ${key?.source})`,
      unchecked: 'not checked whose it is (give --vault-key-file or AP_VAULT_KEY)',
    }[report.mac];
    io.out(`key:      ${mac}`);
    const { signature } = report;
    io.out(
      `signed:   ${signature.state === 'unsigned' ? 'no (made by the CLI or an older version)' : `by backup signing key ${signature.keyId}`}`,
    );
    return report.mac === 'altered' || report.chain?.valid === false ? EXIT_FAILED : EXIT_OK;
  } catch (error) {
    if (error instanceof PlatformError) {
      io.out(`INVALID: ${error.message}`);
      return EXIT_FAILED;
    }
    throw error;
  }
}

/** A data dir no platform ever used: no installation id, no key, agent or audit entry. */
async function isFresh(store: Store): Promise<boolean> {
  if ((await installationIdOf(store)) !== null) return false;
  const counts = await Promise.all([
    store.collection('api_keys').count(),
    store.collection('agents').count(),
    store.log('audit').count(),
  ]);
  return counts.every((n) => n === 0);
}

async function restoreCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args);
  const [archive, ...extra] = positionals;
  if (archive === undefined || extra.length > 0) throw new UsageError('restore takes one <archive>');
  const dataDir = dataDirOf(values, io.cwd);
  const keyFile = join(dataDir, VAULT_KEY_FILE);
  const key = await vaultKeyOf(values, io, dataDir);
  if (key === null) {
    throw new Error(
      `no vault key: give the original platform's key with --vault-key-file <file> (or AP_VAULT_KEY); ${keyFile} does not exist`,
    );
  }
  const existing =
    (await stat(keyFile).catch(() => null)) === null ? null : decodeVaultKey(await readFile(keyFile, 'utf8'));
  if (values['vault-key-file'] !== undefined && existing !== null && !existing.equals(key.key)) {
    throw new Error(
      `${keyFile} holds another vault key than ${key.source}: the platform would start with it and the restored vault values would not open; move it away first`,
    );
  }
  let store: Store;
  try {
    store = await openEmbeddedStore({ path: join(dataDir, 'platform.db'), exclusive: true });
  } catch (error) {
    if (error instanceof StoreInUseError)
      throw new Error(`${error.message}; restore over HTTP works on a running all-in-one (docs/backup.md)`, {
        cause: error,
      });
    throw error;
  }
  try {
    const fresh = await isFresh(store);
    const restored = await service(store, dataDir, key.key).restore(
      { kind: 'path', path: resolve(io.cwd, archive) },
      CLI_ACTOR,
      {
        ...(values.checksum === undefined ? {} : { checksum: values.checksum }),
        allowForeign: values['allow-foreign'] === true || fresh,
      },
    );
    io.out(`restored ${restored.id} (${restored.scope}, made ${restored.created_at}) into ${dataDir}`);
    if (restored.audit_entry_count !== null)
      io.out(`audit chain: ${restored.audit_entry_count} entries, the restore's own entry last`);
    // The archive carries the fleet agreement of the platform it was made on, not its key files
    // (a checkpoint key not put back is made anew): the first process to start records afresh.
    if ((await forgetFleetAgreement(store)) > 0)
      io.out('fleet agreement cleared: the first process to start records the keys and licence it holds (docs/scale-out.md)');
    if (existing === null && io.env?.AP_VAULT_KEY === undefined) {
      await writeFile(keyFile, `${key.key.toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
      io.out(`wrote ${keyFile} (mode 0600): the vault key the restored values need`);
    }
    io.out(
      'start the platform on this data dir; with audit checkpoints, take one once it is up (POST /security/checkpoints, with a supersede_reason when this backup is older than the latest checkpoint: docs/backup.md "Audit")',
    );
    return EXIT_OK;
  } catch (error) {
    if (error instanceof PlatformError) {
      io.err(`agent-platform backup: refused, nothing was changed: ${error.message}`);
      return EXIT_FAILED;
    }
    throw error;
  } finally {
    await store.close();
  }
}
