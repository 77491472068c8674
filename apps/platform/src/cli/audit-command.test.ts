import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '@agent-platform/api/testing';
import { runCliProcess } from './testing/cli-runs.ts';

/** `agent-platform audit <args>` as its own process. */
const cli = (cwd: string, ...args: string[]) => runCliProcess(['audit', ...args], { cwd });

let dir: string;
let api: TestApi | null = null;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-audit-cli-'));
});
afterEach(async () => {
  await api?.close();
  api = null;
  await rm(dir, { recursive: true, force: true });
});

interface Segment {
  from_seq: number;
  entries: Array<{ seq: number; target: string; hash: string }>;
}

/** A platform with a directory sink, a few audit entries and one checkpoint; returns its public key. */
async function anchoredPlatform(): Promise<{ t: TestApi; publicKey: string; checkpointFile: string; entryCount: number }> {
  const sink = join(dir, 'sink');
  const t = await startTestApi({ config: { auth: { mode: 'local' }, audit: { checkpoints: { sink } } } });
  api = t;
  const admin = await t.issueKey('admin', 'root');
  for (const event_type of ['one', 'two', 'three']) await t.request('POST', '/audit/append', { token: admin, body: { event_type } });
  const written = (await t.request('POST', '/security/checkpoints', { token: admin })).body as { name: string; checkpoint: { entry_count: number } };
  const listed = (await t.request('GET', '/security/checkpoints', { token: admin })).body as { public_key: string };
  return { t, publicKey: listed.public_key, checkpointFile: join(sink, written.name), entryCount: written.checkpoint.entry_count };
}

describe('agent-platform audit', () => {
  it('exports a segment that verifies offline against the checkpoint, and names what is wrong with a tampered one', async () => {
    const { t, publicKey, checkpointFile, entryCount } = await anchoredPlatform();
    const exported = await cli(dir, 'export', '--data-dir', join(t.dataDir, 'data'), '--out', 'segment.json');
    expect(exported).toMatchObject({ code: 0 });
    const segment = JSON.parse(await readFile(join(dir, 'segment.json'), 'utf8')) as Segment;
    // The POST /security/checkpoints request itself is audited after the checkpoint: one more entry.
    expect(segment.entries.map((e) => e.seq)).toEqual(Array.from({ length: entryCount + 1 }, (_, i) => i + 1));

    const good = await cli(dir, 'verify-segment', 'segment.json', '--checkpoint', checkpointFile, '--public-key', publicKey);
    expect(good).toMatchObject({ code: 0, stdout: expect.stringContaining(`valid: ${entryCount + 1} entries hash and link`) });

    // An edited entry.
    const edited = structuredClone(segment);
    edited.entries[1]!.target = 'someone-else';
    await writeFile(join(dir, 'edited.json'), JSON.stringify(edited));
    const bad = await cli(dir, 'verify-segment', 'edited.json', '--checkpoint', checkpointFile, '--public-key', publicKey);
    expect(bad).toMatchObject({ code: 1, stdout: expect.stringContaining('INVALID: entry 2: hash mismatch') });

    // A segment cut short of the checkpoint: still linked, but it does not reach the anchored count.
    const cut = { ...segment, entries: segment.entries.slice(0, entryCount - 2) };
    await writeFile(join(dir, 'cut.json'), JSON.stringify(cut));
    const short = await cli(dir, 'verify-segment', 'cut.json', '--checkpoint', checkpointFile, '--public-key', publicKey);
    expect(short).toMatchObject({ code: 1, stdout: expect.stringContaining(`INVALID: the chain has ${entryCount - 2} entries`) });

    // A forged checkpoint (count lowered to match), and the right checkpoint under a stranger's key.
    const forged = JSON.parse(await readFile(checkpointFile, 'utf8')) as { checkpoint: { entry_count: number } };
    forged.checkpoint.entry_count = entryCount - 2;
    await writeFile(join(dir, 'forged.json'), JSON.stringify(forged));
    const forgedRun = await cli(dir, 'verify-segment', 'cut.json', '--checkpoint', 'forged.json', '--public-key', publicKey);
    expect(forgedRun).toMatchObject({ code: 1, stdout: expect.stringContaining('INVALID: checkpoint signature does not verify') });
    const stranger = generateKeyPairSync('ed25519').publicKey.export({ format: 'pem', type: 'spki' }).toString();
    await writeFile(join(dir, 'stranger.pem'), stranger);
    const strangerRun = await cli(dir, 'verify-segment', 'segment.json', '--checkpoint', checkpointFile, '--public-key', 'stranger.pem');
    expect(strangerRun).toMatchObject({ code: 1, stdout: expect.stringContaining('INVALID: checkpoint signature does not verify') });
  });

  it('refuses a wrong command line with exit 2 and the usage', async () => {
    const res = await cli(dir, 'verify-segment', 'segment.json');
    expect(res).toMatchObject({ code: 2, stderr: expect.stringContaining('verify-segment needs --checkpoint') });
    expect((await cli(dir, 'export', '--data-dir', dir, '--from', 'zero', '--out', 'x.json')).code).toBe(2);
  });
});
