import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { exportSegment, parseSignedCheckpoint, verifySegment, type AuditSegment, type StoredAuditEntry } from '@agent-platform/domain';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, type CommandGroup } from './command.ts';

const USAGE = `Usage:
  agent-platform audit export --data-dir <dir> [--from <seq>] [--to <seq>] --out <segment.json>
      Exports audit entries from..to (default: 1 to the newest) of the embedded store in <dir>
      ([storage] data_dir, holding platform.db) with their hashes and links. Read-only.
  agent-platform audit verify-segment <segment.json> --checkpoint <checkpoint.json>
      --public-key <ed25519:... | key.pem>
      Checks offline that the checkpoint is signed by that key, that the segment's entries hash
      and link, and that the segment reaches the checkpoint's entry count with its tip hash.
      The key is the one GET /security/checkpoints shows (public_key), or a PEM file of it.

docs/audit.md "Checkpoints". Exit status: 0 valid, 1 failed or invalid, 2 bad command line.`;

class UsageError extends Error {}

/** `agent-platform audit ...`: export a chain segment and verify it against a checkpoint offline. */
export const auditCommand: CommandGroup = {
  summary: 'export an audit chain segment, or verify one offline against a signed checkpoint',
  usage: USAGE,
  async run(args, io) {
    const [sub, ...rest] = args;
    try {
      if (sub === 'export') return await exportCommand(rest, io.cwd, io.out);
      if (sub === 'verify-segment') return await verifyCommand(rest, io.cwd, io.out);
      if (sub === '--help' || sub === '-h' || sub === 'help') {
        io.out(USAGE);
        return EXIT_OK;
      }
      throw new UsageError(sub === undefined ? 'missing action (export or verify-segment)' : `unknown action '${sub}'`);
    } catch (error) {
      if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') === true) {
        io.err(`agent-platform audit: ${(error as Error).message}`);
        io.err(USAGE);
        return EXIT_USAGE;
      }
      io.err(`agent-platform audit: ${error instanceof Error ? error.message : String(error)}`);
      return EXIT_FAILED;
    }
  },
};

function seqOption(value: string | undefined, name: string): number | null {
  if (value === undefined) return null;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new UsageError(`--${name} must be a positive integer, not '${value}'`);
  return n;
}

async function exportCommand(args: readonly string[], cwd: string, out: (line: string) => void): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: { 'data-dir': { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, out: { type: 'string' } },
    strict: true,
  });
  if (values['data-dir'] === undefined) throw new UsageError('export needs --data-dir <dir>');
  if (values.out === undefined) throw new UsageError('export needs --out <segment.json>');
  const from = seqOption(values.from, 'from') ?? 1;
  const to = seqOption(values.to, 'to');
  const store = await openEmbeddedStore({ path: join(resolve(cwd, values['data-dir']), 'platform.db') });
  try {
    const log = store.log<StoredAuditEntry>('audit', { indexes: ['category', 'identity', 'timestamp'] });
    const segment = await exportSegment(log, from, to);
    const path = resolve(cwd, values.out);
    await writeFile(path, `${JSON.stringify(segment, null, 2)}\n`);
    const last = segment.from_seq + segment.entries.length - 1;
    out(`wrote ${path}: entries ${segment.from_seq}..${last} (${segment.entries.length})`);
    return EXIT_OK;
  } finally {
    await store.close();
  }
}

async function verifyCommand(args: readonly string[], cwd: string, out: (line: string) => void): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: { checkpoint: { type: 'string' }, 'public-key': { type: 'string' } },
    strict: true,
    allowPositionals: true,
  });
  const [segmentFile, ...extra] = positionals;
  if (segmentFile === undefined || extra.length > 0) throw new UsageError('verify-segment takes one <segment.json>');
  if (values.checkpoint === undefined) throw new UsageError('verify-segment needs --checkpoint <file>');
  const keyArg = values['public-key'];
  if (keyArg === undefined) throw new UsageError('verify-segment needs --public-key <ed25519:... | key.pem>');
  const publicKey = keyArg.startsWith('ed25519:') ? keyArg : await readFile(resolve(cwd, keyArg), 'utf8');
  const signed = parseSignedCheckpoint(await readFile(resolve(cwd, values.checkpoint), 'utf8'));
  if (typeof signed === 'string') throw new Error(`${values.checkpoint}: ${signed}`);
  let segment: AuditSegment;
  try {
    segment = JSON.parse(await readFile(resolve(cwd, segmentFile), 'utf8')) as AuditSegment;
  } catch (error) {
    throw new Error(`${segmentFile}: not JSON (${(error as Error).message})`, { cause: error });
  }
  const verdict = await verifySegment(segment, signed, publicKey);
  const cp = signed.checkpoint;
  if (!verdict.valid) {
    out(`INVALID: ${verdict.reason ?? 'the segment does not verify'}`);
    return EXIT_FAILED;
  }
  out(`valid: ${verdict.checked_entries} entries hash and link; the checkpoint of ${cp.at} (${cp.entry_count} entries, key ${cp.key_id}) is reached`);
  return EXIT_OK;
}
