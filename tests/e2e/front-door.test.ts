import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/platform-process.ts';

// The README is a front door (what the platform is, the two commands, the tour, then a table of
// guides), and what a newcomer reads first links only to what ships in the repository.
// The reference pages under docs/ too, but performance.md: the benchmark log, which keeps its
// history by the issue each measurement answered.
const FRONT = async (): Promise<string[]> => [
  'README.md',
  ...(await readdir(join(ROOT, 'docs'))).filter((f) => f.endsWith('.md') && f !== 'performance.md').map((f) => `docs/${f}`),
  ...(await readdir(join(ROOT, 'docs', 'guides'))).filter((f) => f.endsWith('.md')).map((f) => `docs/guides/${f}`),
];

describe('the README, the guides and the reference pages', () => {
  it('keeps the README short: under 250 lines, with the two commands, the tour and the guides table', async () => {
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThanOrEqual(250);
    for (const heading of ['## Two commands', '## A five-minute tour', '## Guides', '## Reference']) expect(readme).toContain(heading);
    const guides = (await readdir(join(ROOT, 'docs', 'guides'))).filter((f) => f.endsWith('.md') && f !== 'README.md');
    for (const guide of guides) expect(readme, `README links docs/guides/${guide}`).toContain(`](docs/guides/${guide})`);
  });

  it('links only to files that exist, and points nowhere outside the repository', async () => {
    const broken: string[] = [];
    const outside: string[] = [];
    for (const file of await FRONT()) {
      const text = await readFile(join(ROOT, file), 'utf8');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^(https?:|mailto:|#)/.test(target!)) continue;
        const path = join(ROOT, dirname(file), target!.split('#')[0]!);
        if (!path.startsWith(ROOT)) outside.push(`${file}: ${target}`);
        else if (!existsSync(path)) broken.push(`${file}: ${target}`);
      }
      for (const [found] of text.matchAll(/\.\.\/shared\/|DECISIONS\.md|\bDECISIONS D\d+|\b[Ii]ssue \d+\b/g)) outside.push(`${file}: ${found}`);
    }
    expect(broken).toEqual([]);
    expect(outside).toEqual([]);
  });
});
