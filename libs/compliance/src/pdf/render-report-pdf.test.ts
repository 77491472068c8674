import { mkdir } from 'node:fs/promises';
import type {
  AttestationView,
  ComplianceControl,
  ComplianceReport,
  ControlStatus,
} from '@agent-platform/contracts';
import { requireBinary } from '@agent-platform/testkit';
import { describe, expect, it } from 'vitest';
import { pdfPages, renderPng } from '../testing/pdf-reader.ts';
import { renderReportPdf } from './render-report-pdf.ts';

const STATUSES: ControlStatus[] = ['Satisfied', 'Unsatisfied', 'Unknown'];
const TIP = `sha256:${'7a'.repeat(32)}`;
/** Set to keep the PNG pages for a person to look at (docs/compliance.md "PDF report"). */
const PNG_DIR = process.env.COMPLIANCE_PNG_DIR;

function attestation(state: AttestationView['state']): AttestationView {
  return {
    id: '6f1c0f5e-2a0b-4c51-9d7e-0b8f7c1e2d3a',
    pack_id: 'acme-long',
    control_id: 'ACME-003',
    document_sha256: 'c'.repeat(64),
    statement: 'The model risk committee approved the program.',
    attested_at: '2026-10-01T09:00:00.000Z',
    expires_at: '2027-10-01T09:00:00.000Z',
    identity: 'external-auditor',
    role: 'auditor',
    external: null,
    signature: { algorithm: 'Ed25519', key_id: 'sha256:3f1c2b9a8d7e6f5a4b3c2d1e0f9a8b7c', value: 'sig' },
    revoked_at: state === 'revoked' ? '2026-10-20T10:00:00.000Z' : null,
    revoked_by: state === 'revoked' ? 'ciso-office' : null,
    state,
  };
}

/** A report with every status, attestation state and text length a carrier pack can produce. */
function sampleReport(controlCount: number): ComplianceReport {
  const controls: ComplianceControl[] = Array.from({ length: controlCount }, (_, i) => {
    const status = STATUSES[i % 3]!;
    const long = i % 7 === 3;
    const manual = i % 4 === 2;
    return {
      control_id: `ACME-${String(i + 1).padStart(3, '0')}`,
      requirement: long
        ? `Requirement ${i + 1}: ${'Keep a written program with board accountability, scaled to the risk of consumer harm, reviewed every year and after every material change, '.repeat(5)}end.`
        : `Requirement ${i + 1}: the audit trail is kept and verified (≥ 183 days, café crème).`,
      platform_controls: ['PC-AUDIT-02', 'PC-AUDIT-04'],
      status,
      evidence_description: 'x',
      evaluated_at: manual && status === 'Unknown' ? null : '2026-11-10T12:00:00.000Z',
      source: `Bulletin §3, item ${i + 1} (sec.)`,
      unconfirmed: i % 2 === 0 ? 'The item number comes from a secondary source.' : null,
      attestation_required: manual,
      attestation_guidance: manual ? 'Committee minutes approving the program.' : null,
      evidence:
        manual && status === 'Unknown'
          ? []
          : [
              {
                platform_control: 'PC-AUDIT-02',
                kind: 'audit_chain',
                status,
                summary: `The audit chain verifies: ${1000 + i} entries, every one re-hashed.`,
                pointers: [{ type: 'audit_seq', ref: `1-${1000 + i}`, detail: `tip ${TIP}` }],
              },
              {
                platform_control: 'PC-PKG-01',
                kind: 'package_inventory',
                status: 'Satisfied',
                summary:
                  '9 installed packages (3 agents), each with its version, source and sha256 content hash.',
                pointers: Array.from({ length: 9 }, (_, p) => ({
                  type: 'package',
                  ref: `package-${p}@1.0.${p}`,
                  detail: `agent-template, registry, sha256:${'d'.repeat(64)}`,
                })),
              },
            ],
      attestation: manual ? (i % 8 === 2 ? attestation('valid') : attestation('revoked')) : null,
    };
  });
  return {
    framework_id: 'acme-long',
    framework_name: 'Acme Mutual internal AI governance policy, all lines of business',
    framework_version: '2026.1',
    jurisdiction: 'Acme Mutual (US-NY, US-CO)',
    generated_at: '2026-11-10T12:00:00.000Z',
    controls,
    satisfied_count: controls.filter((c) => c.status === 'Satisfied').length,
    unsatisfied_count: controls.filter((c) => c.status === 'Unsatisfied').length,
    unknown_count: controls.filter((c) => c.status === 'Unknown').length,
    pack_origin: 'carrier',
    framework_provider: 'Acme Mutual',
    disclaimer: 'Evidence, not certification.',
    platform_version: '0.1.0',
    carrier: { carrier_name: 'Acme Mutual', carrier_id: 'acme-001' },
    integrity: {
      valid: true,
      entry_count: 1040,
      chain_anchor: `sha256:${'0'.repeat(64)}`,
      tip_hash: TIP,
      algorithm: 'sha256',
      walk: 'full',
      first_invalid_seq: null,
      reason: null,
      checkpoint_status: 'verified',
      checkpoint: {
        at: '2026-11-10T11:00:00.000Z',
        entry_count: 1030,
        tip_seq: 1030,
        tip_hash: TIP,
        key_id: 'sha256:3f1c2b9a8d7e6f5a4b3c2d1e0f9a8b7c',
        sink: 'dir:/mnt/worm/audit',
        signature_valid: true,
      },
    },
    report_sha256: 'e'.repeat(64),
  };
}

/** Makes control `index` taller than a page: a 2,000-character requirement and 24 checks. */
function withHugeRow(report: ComplianceReport, index: number): ComplianceReport {
  const huge = report.controls[index]!;
  huge.requirement = `Huge requirement. ${'Every model decision is documented, explained, tested and reviewed. '.repeat(28)}`;
  huge.evidence = Array.from({ length: 24 }, (_, i) => ({
    ...huge.evidence[0]!,
    summary: `Check ${i + 1}: ${'the chain verifies and nothing was removed; '.repeat(4)}`,
  }));
  return report;
}

describe('renderReportPdf', () => {
  it('is the same bytes for the same report (fixed metadata dates, no random ids)', async () => {
    const report = sampleReport(12);
    const [a, b] = await Promise.all([renderReportPdf(report), renderReportPdf(structuredClone(report))]);
    expect(a.equals(b)).toBe(true);
    expect(a.subarray(0, 5).toString()).toBe('%PDF-');
    expect((await renderReportPdf({ ...report, generated_at: '2026-11-10T12:00:01.000Z' })).equals(a)).toBe(
      false,
    );
  });

  it("reads back as a reader's tool sees it: header, summary, anchor, every control, sign-off, page numbers", async () => {
    const report = sampleReport(40);
    const pages = await pdfPages(await renderReportPdf(report));
    expect(pages.length).toBeGreaterThan(3);
    const all = pages.join(' ');
    expect(pages[0]).toContain('Compliance evidence report');
    expect(pages[0]).toContain('Acme Mutual internal AI governance policy');
    expect(pages[0]).toContain('acme-long, version 2026.1');
    expect(pages[0]).toContain('Acme Mutual (acme-001)');
    // The pack's author issued the framework; the platform issued the report.
    expect(pages[0]!.replace(/\s+/g, ' ')).toContain('Framework issued by Acme Mutual');
    expect(pages[0]).toContain('2026-11-10 12:00:00 UTC');
    expect(all).toMatch(/14\s+Satisfied\s+13\s+Unsatisfied\s+13\s+Unknown/);
    expect(all).toContain(TIP);
    expect(all).toContain('VALID: every entry re-hashed and linked');
    for (const control of report.controls) expect(all).toContain(control.control_id);
    // Text the standard fonts cannot show is mapped, not dropped: >= for the symbol, accents kept.
    expect(all).toContain('>= 183 days, café crème');
    expect(all).toContain('UNCONFIRMED: The item number comes from a secondary source.');
    expect(all).toContain('and 5 more (JSON report)');
    expect(pages.at(-1)).toContain('Sign-off');
    expect(pages.at(-1)).toContain(`I have reviewed this report (SHA-256 ${'e'.repeat(64)})`);
    pages.forEach((text, i) => expect(text).toContain(`Page ${i + 1} of ${pages.length}`));
  });

  it('repeats the table header on every page the table runs over, and moves a row that does not fit whole', async () => {
    const pages = await pdfPages(await renderReportPdf(sampleReport(40)));
    const tablePages = pages.filter((p) => /ACME-\d{3}/.test(p));
    expect(tablePages.length).toBeGreaterThan(2);
    for (const page of tablePages)
      expect(page).toMatch(/^.*Control Requirement \(paraphrased\) Status Evidence and pointers Attestation/);
    // A row is never split: each control's id and its requirement's last words are on one page.
    const long = pages.find((p) => p.includes('ACME-004'))!;
    expect(long).toContain('Requirement 4:');
    expect(long.replace(/\s+/g, ' ')).toContain('material change, end.');
  });

  it('clips a row taller than a whole page instead of running it off the page or over the footer', async () => {
    const report = withHugeRow(sampleReport(3), 1);
    const pages = await pdfPages(await renderReportPdf(report));
    const index = pages.findIndex((p) => p.includes('Huge requirement.'));
    expect(pages[index]).toContain('ACME-002');
    expect(pages.join(' ')).toContain('Check 1:');
    expect(pages.join(' ')).not.toContain('Check 24:');
    expect(pages[index]).toContain(
      'Row cut to fit one page: the JSON report (format=json) has ACME-002 in full.',
    );
    expect(pages[index]).toMatch(/Page \d+ of \d+/);
    // The next row starts on the next page, under a repeated header.
    expect(pages[index + 1]).toMatch(/^Control Requirement \(paraphrased\).* ACME-003 Requirement 3:/);
  });

  const pdftoppm = requireBinary('pdftoppm');
  it.skipIf(pdftoppm === null)('renders every page to PNG (poppler), each with content on it', async () => {
    const bytes = await renderReportPdf(withHugeRow(sampleReport(40), 10));
    const pages = await pdfPages(bytes);
    if (PNG_DIR !== undefined) await mkdir(PNG_DIR, { recursive: true });
    const { files, sizes } = await renderPng(pdftoppm!, bytes, 'carrier-long', PNG_DIR);
    expect(files).toHaveLength(pages.length);
    // A blank A4 page at 80 dpi compresses to about 2 kB; each of these carries text and rules.
    for (const size of sizes) expect(size).toBeGreaterThan(8000);
  });
});
