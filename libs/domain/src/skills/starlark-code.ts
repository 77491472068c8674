/**
 * Where a starlark skill keeps its code (docs/skills.md). DECISIONS D4 allows a package exactly
 * one payload file, so the code is the one fenced block marked `starlark` in the SKILL.md body;
 * the prose around it is for people. Line numbers in Starlark errors count from the first line
 * inside the fence, under the file name SKILL.md `entry` gives (e.g. `tools.star`).
 */
export type StarlarkCode = { ok: true; source: string } | { ok: false; message: string };

const OPEN = /^ {0,3}(`{3,}|~{3,})\s*starlark\s*$/i;

export function starlarkCode(body: string): StarlarkCode {
  const lines = body.split(/\r?\n/);
  const blocks: string[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    const fence = OPEN.exec(lines[i] ?? '')?.[1];
    if (fence === undefined) continue;
    const close = new RegExp(`^ {0,3}${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`);
    const end = lines.findIndex((line, j) => j > i && close.test(line));
    if (end < 0) return { ok: false, message: `the \`\`\`starlark block opened on body line ${i + 1} is never closed` };
    blocks.push(lines.slice(i + 1, end).join('\n') + '\n');
    i = end;
  }
  if (blocks.length === 0)
    return { ok: false, message: 'a starlark skill keeps its code in one fenced ```starlark block of the SKILL.md body; there is none' };
  if (blocks.length > 1)
    return { ok: false, message: `a starlark skill keeps its code in one fenced \`\`\`starlark block; the body has ${blocks.length}` };
  return { ok: true, source: blocks[0] ?? '' };
}
