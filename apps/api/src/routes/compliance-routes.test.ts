import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ComplianceReport } from '@agent-platform/contracts';
import { pdfPages, renderPng } from '@agent-platform/compliance/testing';
import { fixedClock } from '@agent-platform/domain';
import { requireBinary } from '@agent-platform/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  editStore,
  startCompliancePlatform,
  type CompliancePlatform,
} from '../compliance/compliance-fixture.ts';

const NOW = '2026-11-10T12:00:00.000Z';
const CARRIER_PACK = `
format: agent-platform/compliance-pack/1
id: acme-internal
name: Acme internal AI policy
version: "2026.1"
jurisdiction: Acme Mutual, all lines
controls:
  - id: ACME-1
    requirement: The audit trail is on and intact, and kept seven years.
    platform_controls: [PC-AUDIT-01, PC-AUDIT-02]
    evidence:
      - kind: audit_retention
        min_days: 2557
`;
/** Set to keep the PNG pages of the NAIC report for a person to look at. */
const PNG_DIR = process.env.COMPLIANCE_PNG_DIR;

let dir: string;
let platform: CompliancePlatform;
let clock: ReturnType<typeof fixedClock>;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-compliance-routes-'));
  clock = fixedClock(NOW);
});

afterEach(async () => {
  await platform?.api.close();
  await rm(dir, { recursive: true, force: true });
});

async function wellRun(
  config: Parameters<typeof startCompliancePlatform>[1]['config'] = {},
): Promise<CompliancePlatform> {
  platform = await startCompliancePlatform('well-run', { clock, dir, config });
  return platform;
}

describe('GET /compliance/packs', () => {
  it('lists the built-in packs to an auditor and an admin; other roles get 403', async () => {
    const { api, auditor, admin } = await wellRun();
    const res = await api.request('GET', '/compliance/packs', { token: auditor });
    expect(res.status).toBe(200);
    expect(res.body.failed_packs).toEqual([]);
    expect(res.body.packs).toContainEqual({
      id: 'naic-ais-bulletin',
      name: 'NAIC Model Bulletin: Use of Artificial Intelligence Systems by Insurers',
      version: '2023-12-04',
      jurisdiction: 'US, states that adopted the bulletin',
      control_count: 10,
      origin: 'built-in',
    });
    expect((res.body.packs as unknown[]).length).toBe(7);
    expect((await api.request('GET', '/compliance/packs', { token: admin })).status).toBe(200);
    for (const role of ['viewer', 'operator', 'developer', 'service'] as const) {
      const denied = await api.request('GET', '/compliance/packs', { token: await api.issueKey(role) });
      expect(denied.status, role).toBe(403);
      expect(denied.body).toEqual({ error: 'forbidden', message: expect.stringContaining('ComplianceRead') });
    }
  });

  it('adds the carrier packs of [compliance] packs_dir, lists and logs a bad one, and reads the directory again on reload', async () => {
    const packsDir = join(dir, 'packs');
    await mkdir(packsDir);
    await writeFile(join(packsDir, 'acme.yaml'), CARRIER_PACK);
    await writeFile(
      join(packsDir, 'typo.yaml'),
      CARRIER_PACK.replace('acme-internal', 'acme-typo').replace(
        'kind: audit_retention',
        'kind: audit_retension',
      ),
    );
    const { api, auditor, admin } = await wellRun({ compliance: { packs_dir: packsDir } });
    const listed = await api.request('GET', '/compliance/packs', { token: auditor });
    expect(listed.body.packs).toContainEqual(
      expect.objectContaining({ id: 'acme-internal', origin: 'carrier', control_count: 1 }),
    );
    expect(listed.body.failed_packs).toEqual([
      {
        file: 'typo.yaml',
        errors: [
          expect.stringContaining(
            `control ACME-1: field 'evidence[0].kind': unknown evidence kind 'audit_retension' (did you mean "audit_retention"?)`,
          ),
        ],
      },
    ]);
    expect(api.logs().some((line) => line.includes('compliance pack typo.yaml refused'))).toBe(true);

    const report = await api.request('GET', '/compliance/packs/acme-internal/report', { token: auditor });
    expect(report.status).toBe(200);
    expect(report.body).toMatchObject({ framework_id: 'acme-internal', pack_origin: 'carrier' });
    // Seq 1 is still there: nothing was ever removed, so seven years of retention holds so far.
    expect(report.body.controls[0]).toMatchObject({
      status: 'Satisfied',
      platform_controls: ['PC-AUDIT-01', 'PC-AUDIT-02'],
    });

    await writeFile(join(packsDir, 'typo.yaml'), CARRIER_PACK.replace('acme-internal', 'acme-typo'));
    await rm(join(packsDir, 'acme.yaml'));
    expect((await api.request('POST', '/config/reload', { token: admin })).status).toBe(200);
    const reloaded = await api.request('GET', '/compliance/packs', { token: auditor });
    expect(reloaded.body.failed_packs).toEqual([]);
    expect((reloaded.body.packs as Array<{ id: string }>).map((p) => p.id)).toContain('acme-typo');
    expect(
      (await api.request('GET', '/compliance/packs/acme-internal/report', { token: auditor })).status,
    ).toBe(404);
  });

  it('a packs_dir that cannot be read does not stop the platform: it is listed as failed', async () => {
    const { api, auditor } = await wellRun({ compliance: { packs_dir: join(dir, 'nowhere') } });
    const res = await api.request('GET', '/compliance/packs', { token: auditor });
    expect((res.body.packs as unknown[]).length).toBe(7);
    expect(res.body.failed_packs).toEqual([
      {
        file: join(dir, 'nowhere'),
        errors: [expect.stringMatching(/^\[compliance\] packs_dir cannot be read: ENOENT/)],
      },
    ]);
  });
});

describe('GET /compliance/packs/{id}/report', () => {
  it('404 NotFound for a pack that is not loaded, in either format', async () => {
    const { api, auditor } = await wellRun();
    for (const query of ['', '?format=pdf']) {
      const res = await api.request('GET', `/compliance/packs/hipaa/report${query}`, { token: auditor });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({
        error: {
          category: 'NotFound',
          message: "compliance pack 'hipaa' not found",
          details: { kind: 'compliance pack', id: 'hipaa' },
        },
      });
    }
  });

  it('400 ValidationError for a format other than json or pdf, naming both', async () => {
    const { api, auditor } = await wellRun();
    const res = await api.request('GET', '/compliance/packs/naic-ais-bulletin/report?format=docx', {
      token: auditor,
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      category: 'ValidationError',
      message: "query parameter 'format' must be one of: json, pdf",
    });
  });

  it('json is the default; pdf is a download named after the framework', async () => {
    const { api, auditor } = await wellRun();
    const json = await api.request('GET', '/compliance/packs/naic-ais-bulletin/report', { token: auditor });
    expect(json.headers['content-type']).toMatch(/^application\/json/);
    expect(Object.keys(json.body as object).slice(0, 9)).toEqual([
      'framework_id',
      'framework_name',
      'framework_version',
      'jurisdiction',
      'generated_at',
      'controls',
      'satisfied_count',
      'unsatisfied_count',
      'unknown_count',
    ]);
    expect(Object.keys((json.body as ComplianceReport).controls[0]!).slice(0, 6)).toEqual([
      'control_id',
      'requirement',
      'platform_controls',
      'status',
      'evidence_description',
      'evaluated_at',
    ]);
    const pdf = await api.app.inject({
      method: 'GET',
      url: '/compliance/packs/naic-ais-bulletin/report?format=pdf',
      headers: { authorization: `Bearer ${auditor}` },
    });
    expect(pdf.statusCode).toBe(200);
    expect(pdf.headers['content-type']).toBe('application/pdf');
    expect(pdf.headers['content-disposition']).toBe(
      'attachment; filename=compliance-report-naic-ais-bulletin.pdf',
    );
    expect(pdf.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');
  });

  it('is the same report, byte for byte, for the same state at the same time; any new audit entry changes it', async () => {
    const { api, auditor, admin } = await wellRun();
    const get = async (format: string) =>
      (
        await api.app.inject({
          method: 'GET',
          url: `/compliance/packs/naic-ais-bulletin/report?format=${format}`,
          headers: { authorization: `Bearer ${auditor}` },
        })
      ).rawPayload;
    const [json1, pdf1] = [await get('json'), await get('pdf')];
    const [json2, pdf2] = [await get('json'), await get('pdf')];
    expect(json2.equals(json1)).toBe(true);
    expect(pdf2.equals(pdf1)).toBe(true);
    const first = JSON.parse(json1.toString()) as ComplianceReport;

    await api.request('POST', '/audit/append', { token: admin, body: { event_type: 'board.review' } });
    const after = JSON.parse((await get('json')).toString()) as ComplianceReport;
    expect(after.integrity.entry_count).toBe(first.integrity.entry_count + 2);
    expect(after.report_sha256).not.toBe(first.report_sha256);
    expect((await get('pdf')).equals(pdf1)).toBe(false);
  });

  it('the NAIC report as PDF reads back with every control and the integrity anchor, and renders as pages', async () => {
    const { api, auditor } = await wellRun();
    const json = (await api.request('GET', '/compliance/packs/naic-ais-bulletin/report', { token: auditor }))
      .body as ComplianceReport;
    const pdf = (
      await api.app.inject({
        method: 'GET',
        url: '/compliance/packs/naic-ais-bulletin/report?format=pdf',
        headers: { authorization: `Bearer ${auditor}` },
      })
    ).rawPayload;
    const pages = await pdfPages(pdf);
    const all = pages.join(' ');
    expect(pages[0]).toContain('NAIC Model Bulletin: Use of Artificial Intelligence Systems by Insurers');
    expect(pages[0]).toContain('Acme Mutual (acme-001)');
    expect(pages[0]).toContain(json.report_sha256);
    expect(all).toContain(json.integrity.tip_hash!);
    expect(all).toContain(`Entries ${json.integrity.entry_count}`);
    expect(all).toMatch(/Checkpoint status verified/);
    for (const control of json.controls)
      expect(all).toContain(`${control.control_id} ${control.requirement.split(' ').slice(0, 4).join(' ')}`);
    expect(all).toContain('Sign-off');
    pages.forEach((text, i) => expect(text).toContain(`Page ${i + 1} of ${pages.length}`));

    const pdftoppm = requireBinary('pdftoppm');
    if (pdftoppm === null) return;
    if (PNG_DIR !== undefined) await mkdir(PNG_DIR, { recursive: true });
    const { files, sizes } = await renderPng(pdftoppm, pdf, 'naic-report', PNG_DIR);
    expect(files).toHaveLength(pages.length);
    for (const size of sizes) expect(size).toBeGreaterThan(8000);
  });

  it('an edited audit entry makes the anchor invalid and the chain control Unsatisfied, naming the entry', async () => {
    const { api, auditor } = await wellRun();
    editStore(
      api.dataDir,
      'UPDATE l_audit SET body = json_set(body, ?, ?) WHERE seq = ?',
      '$.identity',
      'mallory',
      3,
    );
    const res = await api.request('GET', '/compliance/packs/platform-controls/report', { token: auditor });
    const report = res.body as ComplianceReport;
    expect(report.integrity).toMatchObject({
      valid: false,
      first_invalid_seq: 3,
      reason: expect.stringMatching(/^hash mismatch/),
    });
    const chain = report.controls.find((c) => c.control_id === 'PC-AUDIT-02')!;
    expect(chain.status).toBe('Unsatisfied');
    expect(chain.evidence[0]!.pointers).toEqual([
      { type: 'audit_seq', ref: '3', detail: 'first invalid entry' },
    ]);
  });

  it('entries removed from the start of a young trail make retention Unsatisfied', async () => {
    const { api, auditor } = await wellRun();
    editStore(api.dataDir, 'DELETE FROM l_audit WHERE seq < 4');
    const report = (
      await api.request('GET', '/compliance/packs/platform-controls/report', { token: auditor })
    ).body as ComplianceReport;
    const retention = report.controls.find((c) => c.control_id === 'PC-AUDIT-04')!;
    expect(retention.status).toBe('Unsatisfied');
    expect(retention.evidence_description).toContain(
      'Entries before seq 4 were removed although the oldest entry kept is only 0 days old; required: 183 days.',
    );
  });

  it('with audit disabled, trail-based controls are Unknown, not Satisfied, and the anchor says disabled', async () => {
    const { api, auditor } = await wellRun({ audit: { enabled: false, checkpoints: { sink: '' } } });
    const report = (
      await api.request('GET', '/compliance/packs/platform-controls/report', { token: auditor })
    ).body as ComplianceReport;
    expect(report.integrity).toMatchObject({ valid: null, checkpoint_status: 'disabled', entry_count: 0 });
    const status = (id: string) => report.controls.find((c) => c.control_id === id)!.status;
    expect(status('PC-AUDIT-01')).toBe('Unsatisfied');
    for (const id of [
      'PC-AUDIT-02',
      'PC-AUDIT-03',
      'PC-AUDIT-04',
      'PC-CHANGE-01',
      'PC-PII-01',
      'PC-ROUTE-01',
    ])
      expect(status(id), id).toBe('Unknown');
  });
});
