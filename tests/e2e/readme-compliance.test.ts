import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ComplianceReport } from '@agent-platform/contracts';
import { pdfPages } from '@agent-platform/compliance/testing';
import { freePort } from '@agent-platform/testkit';
import { stringify } from 'smol-toml';
import { afterEach, describe, expect, it } from 'vitest';
import { writeLicence } from '../support/fleet.ts';
import { call, startPlatform, type PlatformProcess } from '../support/platform-process.ts';
import { readmeCommands } from '../support/readme-shell.ts';
import { createWalkthrough } from '../support/readme-walkthrough.ts';

// Issue 13 item 3, "done means": a new user downloads a NAIC report as PDF. The README section
// "Compliance reports" run as written against the all-in-one platform (`npm start`): an auditor
// key, the pack list, the JSON report, the PDF download, an attestation of NAIC-01 that moves it
// from Unknown to Satisfied.
const SECTION = 'Compliance reports: a NAIC report as PDF';
let dir: string | undefined;
let platform: PlatformProcess | undefined;

afterEach(async () => {
  platform?.kill();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('README compliance walkthrough', () => {
  it('an auditor lists the packs, reads the NAIC report, downloads it as PDF and attests a manual control', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ap-compliance-tour-'));
    const data = join(dir, '.agent-platform');
    await mkdir(data);
    // The tour's platform (API keys, a licence), on a free port instead of 4200.
    const port = await freePort();
    await writeFile(
      join(dir, 'agent-platform.toml'),
      stringify({
        server: { listen: `127.0.0.1:${port}` },
        storage: { data_dir: './.agent-platform' },
        auth: { mode: 'local' },
        licence: await writeLicence(data, {}),
      }),
    );
    platform = startPlatform(dir);
    const B = await platform.listening(90_000);
    const admin = await call(B, 'POST', '/auth/keys', { body: { name: 'admin', role: 'admin' } });
    expect(admin.status, admin.text).toBe(200);

    const w = createWalkthrough(await readmeCommands(SECTION), {
      dir,
      home: dir,
      addresses: { '127.0.0.1:4200': `127.0.0.1:${port}` },
      vars: { B, H: `Authorization: Bearer ${admin.body.secret as string}` },
      startPlatform: () => Promise.reject(new Error('this section starts no platform')),
    });
    const key = await w.next('curl -s -H "$H" -X POST $B/auth/keys');
    expect(key.json).toMatchObject({ name: 'auditor', role: 'auditor' });
    await w.next('export AUDITOR=', { value: key.json.secret as string });
    await w.next('A=');
    await w.next('curl -s -H "$A" $B/compliance/packs');
    const before = (await w.next('curl -s -H "$A" $B/compliance/packs/naic-ais-bulletin/report'))
      .json as ComplianceReport;
    expect(before.carrier).toEqual({ carrier_name: 'Fleet Mutual', carrier_id: 'fleet-mutual' });
    expect(before.controls.find((c) => c.control_id === 'NAIC-01')!.status).toBe('Unknown');

    await w.next('curl -s -H "$A" -o compliance-report-naic-ais-bulletin.pdf');
    const pdf = await readFile(join(dir, 'compliance-report-naic-ais-bulletin.pdf'));
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    const pages = await pdfPages(pdf);
    expect(pages[0]).toContain('NAIC Model Bulletin: Use of Artificial Intelligence Systems by Insurers');
    expect(pages[0]).toContain('Fleet Mutual (fleet-mutual)');
    expect(pages.join(' ')).toContain(before.integrity.tip_hash!);
    expect(pages.at(-1)).toContain('Sign-off');

    await w.next('curl -s -H "$A" -X POST $B/compliance/attestations');
    const after = (await w.next('curl -s -H "$A" $B/compliance/packs/naic-ais-bulletin/report'))
      .json as ComplianceReport;
    expect(after.controls.find((c) => c.control_id === 'NAIC-01')).toMatchObject({
      status: 'Satisfied',
      attestation: { identity: 'auditor', state: 'valid' },
    });
    expect(w.remaining()).toEqual([]);
  });
});
