import type { ComplianceReport, ControlStatus } from '@agent-platform/contracts';
import { drawControlTable } from './control-table.ts';
import {
  BODY_BOTTOM,
  COLORS,
  CONTENT_WIDTH,
  MARGIN,
  PAGE_HEIGHT,
  PdfWriter,
  type Block,
} from './pdf-writer.ts';
import { toWinAnsi } from './win-ansi.ts';

const LABEL_WIDTH = 112;

/** `2026-11-10T12:00:00.000Z` -> `2026-11-10 12:00:00 UTC`. */
function utc(iso: string): string {
  return iso.replace('T', ' ').replace(/(\.\d+)?Z$/, ' UTC');
}

/** Label/value rows in a light panel: the header facts and the integrity anchor. */
function facts(w: PdfWriter, rows: ReadonlyArray<[string, string, string?]>): void {
  const valueWidth = CONTENT_WIDTH - LABEL_WIDTH - 12;
  const heights = rows.map(
    ([label, value]) =>
      Math.max(
        w.blockHeight({ text: label, font: 'Helvetica-Bold', size: 8 }, LABEL_WIDTH),
        w.blockHeight({ text: value, size: 8 }, valueWidth),
      ) + 2,
  );
  const total = heights.reduce((a, b) => a + b, 0) + 10;
  w.ensure(total);
  w.box(MARGIN.left, w.y, CONTENT_WIDTH, total, COLORS.panelFill);
  let y = w.y + 5;
  rows.forEach(([label, value, color], i) => {
    w.drawBlocks(
      [{ text: label, font: 'Helvetica-Bold', size: 8, color: COLORS.muted }],
      MARGIN.left + 6,
      y,
      LABEL_WIDTH,
    );
    w.drawBlocks(
      [{ text: value, size: 8, ...(color === undefined ? {} : { color, font: 'Helvetica-Bold' as const }) }],
      MARGIN.left + 6 + LABEL_WIDTH,
      y,
      valueWidth,
    );
    y += heights[i]!;
  });
  w.y += total + 12;
}

function header(w: PdfWriter, report: ComplianceReport): void {
  w.paragraph([
    { text: 'Compliance evidence report', font: 'Helvetica-Bold', size: 18, gap: 4 },
    { text: report.framework_name, font: 'Helvetica-Bold', size: 12, color: COLORS.muted, gap: 10 },
  ]);
  const carrier =
    report.carrier === null
      ? 'No licence loaded'
      : `${report.carrier.carrier_name} (${report.carrier.carrier_id})`;
  facts(w, [
    ['Framework', `${report.framework_id}, version ${report.framework_version}`],
    ['Jurisdiction', report.jurisdiction],
    ...(report.framework_provider === null
      ? []
      : [['Framework issued by', report.framework_provider] as [string, string]]),
    [
      'Pack',
      report.pack_origin === 'built-in'
        ? 'Built in (shipped with the platform)'
        : 'Carrier pack ([compliance] packs_dir)',
    ],
    ['Carrier', carrier],
    ['Generated at', utc(report.generated_at)],
    ['Platform version', report.platform_version],
    ['Report SHA-256', report.report_sha256],
  ]);
  w.paragraph([
    { text: report.disclaimer, font: 'Helvetica-Oblique', size: 7.5, color: COLORS.muted, gap: 12 },
  ]);
}

function summary(w: PdfWriter, report: ComplianceReport): void {
  w.heading('Summary', 120);
  const counts: Array<[ControlStatus, number]> = [
    ['Satisfied', report.satisfied_count],
    ['Unsatisfied', report.unsatisfied_count],
    ['Unknown', report.unknown_count],
  ];
  const gap = 10;
  const width = (CONTENT_WIDTH - 2 * gap) / 3;
  counts.forEach(([status, count], i) => {
    const x = MARGIN.left + i * (width + gap);
    w.box(x, w.y, width, 46, COLORS.panelFill, COLORS[status]);
    w.drawBlocks(
      [{ text: String(count), font: 'Helvetica-Bold', size: 20, color: COLORS[status] }],
      x + 10,
      w.y + 6,
      width - 20,
    );
    w.drawBlocks(
      [{ text: status, font: 'Helvetica-Bold', size: 9, color: COLORS[status] }],
      x + 10,
      w.y + 30,
      width - 20,
    );
  });
  w.y += 56;
  const total = report.controls.length;
  const ids = (pick: (c: ComplianceReport['controls'][number]) => boolean) =>
    report.controls.filter(pick).map((c) => c.control_id);
  const manual = ids((c) => c.attestation_required && c.attestation?.state !== 'valid');
  const unsatisfied = ids((c) => c.status === 'Unsatisfied');
  const lines: Block[] = [
    {
      text: `${total} controls evaluated against the platform's state at ${utc(report.generated_at)}.`,
      size: 8.5,
      gap: 4,
    },
  ];
  lines.push({
    text: `Unsatisfied (the platform contradicts the control): ${unsatisfied.length === 0 ? 'none' : unsatisfied.join(', ')}.`,
    size: 8.5,
    gap: 4,
  });
  lines.push({
    text: `Manual controls without a valid signed attestation (they stay Unknown until one is made): ${manual.length === 0 ? 'none' : manual.join(', ')}.`,
    size: 8.5,
    gap: 12,
  });
  w.paragraph(lines);
}

function integrity(w: PdfWriter, report: ComplianceReport): void {
  w.heading('Integrity anchor: the audit chain at generation time', 140);
  const a = report.integrity;
  const valid =
    a.valid === null
      ? 'Audit trail disabled'
      : a.valid
        ? 'VALID: every entry re-hashed and linked'
        : 'INVALID';
  const cp = a.checkpoint;
  const rows: Array<[string, string, string?]> = [
    ['Chain', valid, a.valid === null ? COLORS.Unknown : a.valid ? COLORS.Satisfied : COLORS.Unsatisfied],
    ['Entries', String(a.entry_count)],
    ['Tip hash', a.tip_hash ?? 'none'],
    ['Chain anchor', a.chain_anchor ?? 'none'],
    ['Algorithm', `${a.algorithm ?? 'none'} (walk: ${a.walk})`],
    ['Checkpoint status', a.checkpoint_status.replace(/_/g, ' ')],
  ];
  if (cp !== null) {
    rows.push([
      'Latest checkpoint',
      `${utc(cp.at)}: ${cp.entry_count} entries, tip seq ${cp.tip_seq}, signature ${cp.signature_valid ? 'valid' : 'INVALID'}`,
    ]);
    rows.push(['Checkpoint key', cp.key_id]);
    rows.push(['Checkpoint sink', cp.sink]);
  }
  if (a.reason !== null) rows.push(['Reason', a.reason, a.valid === false ? COLORS.Unsatisfied : undefined]);
  if (a.first_invalid_seq !== null) rows.push(['First invalid entry', `seq ${a.first_invalid_seq}`]);
  facts(w, rows);
  w.paragraph([
    {
      text:
        'Keep the entry count and tip hash of this page. Anyone holding the trail can recompute the chain (docs/audit.md); a later report of the same trail must show at least these entries, with entry ' +
        `${a.entry_count} still carrying this tip hash. The same trail, configuration and time give the same report, byte for byte (its SHA-256 is on page 1).`,
      size: 7.5,
      color: COLORS.muted,
      gap: 12,
    },
  ]);
}

function signOff(w: PdfWriter, report: ComplianceReport): void {
  const blockHeight = 150;
  w.heading('Sign-off', blockHeight + 20);
  w.paragraph([
    {
      text:
        `I have reviewed this report (SHA-256 ${report.report_sha256}), including every control marked Unsatisfied or Unknown and the integrity anchor, ` +
        `and I accept it as a record of the evidence the platform held at ${utc(report.generated_at)}.`,
      size: 8.5,
      gap: 14,
    },
  ]);
  const half = (CONTENT_WIDTH - 24) / 2;
  const fields = ['Name', 'Title', 'Signature', 'Date'];
  (['Accountable officer', 'Reviewer (auditor)'] as const).forEach((role, column) => {
    const x = MARGIN.left + column * (half + 24);
    let y = w.y;
    w.drawBlocks([{ text: role, font: 'Helvetica-Bold', size: 9 }], x, y, half);
    y += 20;
    for (const field of fields) {
      w.drawBlocks([{ text: field, size: 7.5, color: COLORS.muted }], x, y, 60);
      w.doc
        .moveTo(x + 60, y + 9)
        .lineTo(x + half, y + 9)
        .lineWidth(0.5)
        .strokeColor(COLORS.text)
        .stroke();
      y += 24;
    }
  });
  w.y += 20 + fields.length * 24;
}

/** Page numbers and the report's identity at the foot of every page, drawn once all pages exist. */
function footers(w: PdfWriter, report: ComplianceReport): void {
  const range = w.doc.bufferedPageRange();
  for (let i = range.start; i < range.start + range.count; i++) {
    w.doc.switchToPage(i);
    const y = BODY_BOTTOM + 14;
    w.doc
      .moveTo(MARGIN.left, y - 5)
      .lineTo(MARGIN.left + CONTENT_WIDTH, y - 5)
      .lineWidth(0.5)
      .strokeColor(COLORS.border)
      .stroke();
    w.doc.font('Helvetica').fontSize(7).fillColor(COLORS.muted);
    const left = toWinAnsi(
      `${report.framework_id} compliance report, generated ${utc(report.generated_at)}, SHA-256 ${report.report_sha256.slice(0, 16)}...`,
    );
    w.doc.text(left, MARGIN.left, y, { width: CONTENT_WIDTH - 80, lineBreak: false });
    w.doc.text(`Page ${i - range.start + 1} of ${range.count}`, MARGIN.left + CONTENT_WIDTH - 80, y, {
      width: 80,
      align: 'right',
      lineBreak: false,
    });
  }
  // Nothing below may sit past the page: guard against a later edit drawing lower.
  if (BODY_BOTTOM + 24 > PAGE_HEIGHT) throw new Error('footer does not fit the page');
}

/**
 * The PDF of a report (docs/compliance.md "PDF report"): header, summary, integrity anchor,
 * one row per control, sign-off block, page numbers. Built from the report alone with fixed
 * metadata dates, so the same report gives the same bytes. Standard PDF fonts only: nothing to
 * download or embed.
 */
export async function renderReportPdf(report: ComplianceReport): Promise<Buffer> {
  const w = new PdfWriter({
    title: `Compliance report: ${report.framework_name}`,
    subject: `${report.framework_id} ${report.framework_version}, ${report.jurisdiction}`,
    keywords: `compliance, ${report.framework_id}, sha256:${report.report_sha256}`,
    author:
      report.carrier === null
        ? 'Agent Platform'
        : `${report.carrier.carrier_name} (Agent Platform ${report.platform_version})`,
    createdAt: new Date(report.generated_at),
  });
  header(w, report);
  summary(w, report);
  integrity(w, report);
  w.heading('Controls', 100);
  drawControlTable(w, report.controls);
  signOff(w, report);
  footers(w, report);
  return w.finish();
}
