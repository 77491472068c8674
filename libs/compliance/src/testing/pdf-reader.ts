import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';

/** The text of each page of a PDF, as a reader's tool extracts it (pdfjs, Mozilla's parser). */
export async function pdfPages(bytes: Uint8Array): Promise<string[]> {
  const doc = await getDocument({ data: new Uint8Array(bytes), disableFontFace: true, verbosity: 0 }).promise;
  try {
    const pages: string[] = [];
    for (let n = 1; n <= doc.numPages; n++) {
      const content = await (await doc.getPage(n)).getTextContent();
      pages.push(
        content.items
          .map((item) => ('str' in item ? item.str : ''))
          .join(' ')
          .replace(/\s+/g, ' '),
      );
    }
    return pages;
  } finally {
    await doc.destroy();
  }
}

/**
 * Renders every page to PNG with poppler's `pdftoppm`, as a viewer would draw it, into `outDir`
 * (kept, for a person to look at) or a temp dir (removed). Returns the PNG sizes in bytes.
 */
export async function renderPng(
  pdftoppm: string,
  bytes: Uint8Array,
  name: string,
  outDir?: string,
): Promise<{ files: string[]; sizes: number[] }> {
  const dir = outDir ?? (await mkdtemp(join(tmpdir(), 'ap-pdf-png-')));
  try {
    const pdf = join(dir, `${name}.pdf`);
    await writeFile(pdf, bytes);
    await promisify(execFile)(pdftoppm, ['-r', '80', '-png', pdf, join(dir, name)]);
    const files = (await readdir(dir)).filter((f) => f.startsWith(`${name}-`) && f.endsWith('.png')).sort();
    const sizes = await Promise.all(files.map(async (f) => (await stat(join(dir, f))).size));
    return { files: files.map((f) => join(dir, f)), sizes };
  } finally {
    if (outDir === undefined) await rm(dir, { recursive: true, force: true });
  }
}
