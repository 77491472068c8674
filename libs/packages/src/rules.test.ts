import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { RULES } from './rules.ts';

const DOC = new URL('../../../docs/packages.md', import.meta.url);

describe('rule catalogue', () => {
  it('is exactly the set of rules docs/packages.md lists in its Rules table', async () => {
    const doc = await readFile(DOC, 'utf8');
    const table = doc.slice(doc.indexOf('## Rules'));
    const documented = new Set([...table.matchAll(/^\|[^|]*\|[^|]*\| `([a-z0-9-]+)` \|/gm)].map((m) => m[1]));
    expect([...documented].sort()).toEqual(Object.keys(RULES).sort());
  });
});
