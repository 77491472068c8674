import PDFDocument from 'pdfkit';
import { toWinAnsi } from './win-ansi.ts';

/** A4 portrait, in points. */
export const PAGE_WIDTH = 595.28;
export const PAGE_HEIGHT = 841.89;
export const MARGIN = { top: 48, bottom: 54, left: 48, right: 48 } as const;
export const CONTENT_WIDTH = PAGE_WIDTH - MARGIN.left - MARGIN.right;
/** Where body content stops; the footer lives below it. */
export const BODY_BOTTOM = PAGE_HEIGHT - MARGIN.bottom;

export const COLORS = {
  text: '#1d232b',
  muted: '#5b6573',
  border: '#c4ccd6',
  headerFill: '#dfe5ec',
  panelFill: '#f2f4f7',
  stripe: '#f8f9fb',
  warn: '#9a4d00',
  Satisfied: '#1b7f3b',
  Unsatisfied: '#b3261e',
  Unknown: '#8a6d00',
} as const;

export type FontName = 'Helvetica' | 'Helvetica-Bold' | 'Helvetica-Oblique';

/** One styled block of text; blocks of a cell stack vertically. */
export interface Block {
  text: string;
  font?: FontName;
  size?: number;
  color?: string;
  /** Space after this block, in points (default 1.5). */
  gap?: number;
}

/**
 * pdfkit with a cursor and explicit page breaks. pdfkit breaks pages by itself when text runs
 * past the bottom margin; every block here is measured first and placed where it fits, so that
 * automatic break never fires (its bottom margin is set below the footer) and rows never split
 * mid-text or overlap.
 */
export class PdfWriter {
  readonly doc: PDFKit.PDFDocument;
  y: number = MARGIN.top;
  /** Called after a page break the writer made (tables redraw their header). */
  onNewPage: (() => void) | null = null;

  constructor(info: { title: string; subject: string; keywords: string; createdAt: Date; author: string }) {
    this.doc = new PDFDocument({
      size: 'A4',
      margins: { top: MARGIN.top, bottom: 8, left: MARGIN.left, right: MARGIN.right },
      bufferPages: true,
      compress: true,
      // Fixed from the report (never the wall clock): pdfkit derives the file /ID from these, so
      // the same report gives the same bytes.
      info: {
        Title: toWinAnsi(info.title),
        Subject: toWinAnsi(info.subject),
        Keywords: toWinAnsi(info.keywords),
        Author: toWinAnsi(info.author),
        Creator: 'Agent Platform',
        Producer: 'Agent Platform (PDFKit)',
        CreationDate: info.createdAt,
        ModDate: info.createdAt,
      },
    });
  }

  private style(block: Block): void {
    this.doc
      .font(block.font ?? 'Helvetica')
      .fontSize(block.size ?? 8)
      .fillColor(block.color ?? COLORS.text);
  }

  blockHeight(block: Block, width: number): number {
    this.style(block);
    return this.doc.heightOfString(toWinAnsi(block.text), { width, lineGap: 0.5 }) + (block.gap ?? 1.5);
  }

  blocksHeight(blocks: readonly Block[], width: number): number {
    return blocks.reduce((sum, b) => sum + this.blockHeight(b, width), 0);
  }

  /** Draws blocks at (x, y) within `width`; clips at `maxHeight` with an ellipsis when given. */
  drawBlocks(
    blocks: readonly Block[],
    x: number,
    y: number,
    width: number,
    maxHeight = Number.POSITIVE_INFINITY,
  ): void {
    let at = y;
    for (const block of blocks) {
      const room = y + maxHeight - at;
      if (room < 6) break;
      this.style(block);
      const text = toWinAnsi(block.text);
      const height = this.doc.heightOfString(text, { width, lineGap: 0.5 });
      this.doc.text(text, x, at, {
        width,
        lineGap: 0.5,
        ...(height > room ? { height: room, ellipsis: true } : {}),
      });
      at += Math.min(height, room) + (block.gap ?? 1.5);
    }
  }

  remaining(): number {
    return BODY_BOTTOM - this.y;
  }

  newPage(): void {
    this.doc.addPage();
    this.y = MARGIN.top;
    this.onNewPage?.();
  }

  /** Starts a new page unless `height` fits below the cursor. */
  ensure(height: number): void {
    if (height > this.remaining()) this.newPage();
  }

  /** A section heading, kept with at least `keepWith` points of what follows. */
  heading(text: string, keepWith = 60): void {
    this.ensure(22 + keepWith);
    this.style({ text, font: 'Helvetica-Bold', size: 11.5 });
    this.doc.text(toWinAnsi(text), MARGIN.left, this.y, { width: CONTENT_WIDTH });
    this.y += 16;
    this.doc
      .moveTo(MARGIN.left, this.y)
      .lineTo(MARGIN.left + CONTENT_WIDTH, this.y)
      .lineWidth(0.6)
      .strokeColor(COLORS.border)
      .stroke();
    this.y += 6;
  }

  paragraph(blocks: readonly Block[], width = CONTENT_WIDTH): void {
    const height = this.blocksHeight(blocks, width);
    this.ensure(height);
    this.drawBlocks(blocks, MARGIN.left, this.y, width);
    this.y += height;
  }

  box(
    x: number,
    y: number,
    width: number,
    height: number,
    fill: string | null,
    stroke: string | null = COLORS.border,
  ): void {
    this.doc.rect(x, y, width, height).lineWidth(0.5);
    if (fill !== null && stroke !== null) this.doc.fillAndStroke(fill, stroke);
    else if (fill !== null) this.doc.fill(fill);
    else if (stroke !== null) this.doc.strokeColor(stroke).stroke();
  }

  /** The finished file. */
  finish(): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      this.doc.on('data', (chunk: Buffer) => chunks.push(chunk));
      this.doc.on('end', () => resolve(Buffer.concat(chunks)));
      this.doc.on('error', reject);
      this.doc.end();
    });
  }
}
