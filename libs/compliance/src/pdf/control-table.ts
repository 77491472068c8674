import type {
  AttestationView,
  ComplianceControl,
  EvidencePointer,
  EvidenceResult,
} from '@agent-platform/contracts';
import { BODY_BOTTOM, COLORS, MARGIN, type Block, type PdfWriter } from './pdf-writer.ts';

const PAD = 4;
/** Column widths; they add up to the content width of A4 with the writer's margins. */
const COLUMNS = [
  { title: 'Control', width: 54 },
  { title: 'Requirement (paraphrased)', width: 148 },
  { title: 'Status', width: 60 },
  { title: 'Evidence and pointers', width: 160 },
  { title: 'Attestation', width: 77.28 },
] as const;
const HEADER_HEIGHT = 16;
/** A pointer list per check is cut here (the JSON report has them all). */
const MAX_POINTERS = 4;

const small = (text: string, color: string = COLORS.muted, font: Block['font'] = 'Helvetica'): Block => ({
  text,
  size: 6.5,
  color,
  font,
});

/**
 * Long machine values read badly in a narrow column: sha256 digests are cut to 12 hex digits and
 * ISO timestamps shown to the minute. The JSON report keeps them whole.
 */
export function readable(text: string): string {
  return text
    .replace(/sha256:([0-9a-f]{12})[0-9a-f]{52}/g, 'sha256:$1...')
    .replace(/(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}):\d{2}(\.\d+)?Z/g, '$1 $2 UTC');
}

function pointerText(pointer: EvidencePointer): string {
  const names: Record<string, string> = {
    audit_seq: 'audit seq',
    config: 'config',
    package: 'package',
    api_key: 'key',
    licence: 'licence',
    vault_key: 'vault',
    workflow_run: 'run',
    checkpoint: 'checkpoint',
  };
  const detail = pointer.detail === undefined || pointer.detail === '' ? '' : ` (${pointer.detail})`;
  return readable(`${names[pointer.type] ?? pointer.type} ${pointer.ref}${detail}`);
}

function evidenceBlocks(evidence: readonly EvidenceResult[]): Block[] {
  if (evidence.length === 0) return [small('No platform evidence: manual control.')];
  return evidence.flatMap((e, i) => {
    const pointers = e.pointers.slice(0, MAX_POINTERS).map(pointerText);
    if (e.pointers.length > MAX_POINTERS)
      pointers.push(`and ${e.pointers.length - MAX_POINTERS} more (JSON report)`);
    const blocks: Block[] = [
      {
        text: `${e.status}: ${e.platform_control ?? 'own check'} (${e.kind})`,
        font: 'Helvetica-Bold',
        size: 6.5,
        color: COLORS[e.status],
        gap: 0.5,
      },
      { text: readable(e.summary), size: 7, gap: pointers.length > 0 ? 0.5 : 3 },
    ];
    if (pointers.length > 0)
      blocks.push({ ...small(`-> ${pointers.join('; ')}`), gap: i === evidence.length - 1 ? 1 : 3 });
    return blocks;
  });
}

function attestationBlocks(control: ComplianceControl): Block[] {
  if (!control.attestation_required) return [small('Not required: platform evidence only.')];
  const a: AttestationView | null = control.attestation;
  const guidance =
    control.attestation_guidance === null ? [] : [small(`Needs: ${control.attestation_guidance}`)];
  if (a === null)
    return [
      { text: 'Required; none yet.', font: 'Helvetica-Bold', size: 7, color: COLORS.Unknown },
      ...guidance,
    ];
  const state = a.state === 'valid' ? 'Valid' : a.state.replace(/_/g, ' ');
  return [
    {
      text: state.charAt(0).toUpperCase() + state.slice(1),
      font: 'Helvetica-Bold',
      size: 7,
      color: a.state === 'valid' ? COLORS.Satisfied : COLORS.Unknown,
    },
    { text: `By ${a.identity} (${a.role})${a.external === null ? '' : `, ${a.external.issuer}`}`, size: 7 },
    small(`On ${a.attested_at.slice(0, 10)}, until ${a.expires_at.slice(0, 10)}`),
    small(`Document sha256 ${a.document_sha256.slice(0, 16)}...`),
    small(`Signed ${a.signature.key_id.slice(0, 19)}...`),
    ...(a.revoked_at === null
      ? []
      : [small(`Revoked ${a.revoked_at.slice(0, 10)} by ${a.revoked_by ?? ''}`, COLORS.warn)]),
  ];
}

function rowCells(control: ComplianceControl): Block[][] {
  const requirement: Block[] = [{ text: control.requirement, size: 7.5, gap: 2 }];
  if (control.source !== null) requirement.push(small(`Source: ${control.source}`));
  if (control.unconfirmed !== null)
    requirement.push(small(`UNCONFIRMED: ${control.unconfirmed}`, COLORS.warn, 'Helvetica-Oblique'));
  if (control.platform_controls.length > 0)
    requirement.push(small(`Platform controls: ${control.platform_controls.join(', ')}`));
  const evaluated =
    control.evaluated_at === null ? 'Never evaluated' : readable(`Evaluated ${control.evaluated_at}`);
  return [
    [{ text: control.control_id, font: 'Helvetica-Bold', size: 7.5 }],
    requirement,
    [
      { text: control.status, font: 'Helvetica-Bold', size: 8, color: COLORS[control.status], gap: 2 },
      small(evaluated),
    ],
    evidenceBlocks(control.evidence),
    attestationBlocks(control),
  ];
}

function drawHeader(w: PdfWriter): void {
  let x = MARGIN.left;
  for (const column of COLUMNS) {
    w.box(x, w.y, column.width, HEADER_HEIGHT, COLORS.headerFill);
    w.drawBlocks(
      [{ text: column.title, font: 'Helvetica-Bold', size: 7 }],
      x + PAD,
      w.y + 4.5,
      column.width - 2 * PAD,
    );
    x += column.width;
  }
  w.y += HEADER_HEIGHT;
}

/**
 * The per-control table: one row per control, never split across pages (a row that does not fit
 * moves to the next page, whose table header is drawn again), cell text wrapped in its column.
 * A row taller than a whole page (a pack with very long text) is clipped with an ellipsis; the
 * JSON report has the full text.
 */
export function drawControlTable(w: PdfWriter, controls: readonly ComplianceControl[]): void {
  const maxRow = BODY_BOTTOM - 48 - HEADER_HEIGHT - 2;
  w.ensure(HEADER_HEIGHT + 60);
  drawHeader(w);
  w.onNewPage = () => drawHeader(w);
  controls.forEach((control, index) => {
    const cells = rowCells(control);
    const natural =
      Math.max(...cells.map((blocks, i) => w.blocksHeight(blocks, COLUMNS[i]!.width - 2 * PAD))) + 2 * PAD;
    const clipped = natural > maxRow;
    const height = Math.min(maxRow, natural);
    // A clipped row says so on its last line, so that nobody takes the cut text for all of it.
    const note = small(
      `Row cut to fit one page: the JSON report (format=json) has ${control.control_id} in full.`,
      COLORS.warn,
      'Helvetica-Oblique',
    );
    const noteWidth = COLUMNS[1].width - 2 * PAD;
    const noteHeight = clipped ? w.blocksHeight([note], noteWidth) + 2 : 0;
    w.ensure(height);
    let x = MARGIN.left;
    cells.forEach((blocks, i) => {
      const width = COLUMNS[i]!.width;
      w.box(x, w.y, width, height, index % 2 === 1 ? COLORS.stripe : null);
      w.drawBlocks(
        blocks,
        x + PAD,
        w.y + PAD,
        width - 2 * PAD,
        height - 2 * PAD - (i === 1 ? noteHeight : 0),
      );
      x += width;
    });
    if (clipped)
      w.drawBlocks(
        [note],
        MARGIN.left + COLUMNS[0].width + PAD,
        w.y + height - PAD - noteHeight + 2,
        noteWidth,
      );
    w.y += height;
  });
  w.onNewPage = null;
  w.y += 10;
}
