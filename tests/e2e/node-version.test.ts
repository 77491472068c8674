import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/platform-process.ts';

// The Node.js version the README promises is the one package.json's `engines` declares, and the
// one this suite runs on satisfies it: "stated and true".
describe('supported Node.js versions', () => {
  it('states one minimum in the README and in engines, and runs on a Node that meets it', async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    const minimum = /^>=(\d+)\.(\d+)$/.exec(pkg.engines.node);
    expect(minimum, `engines.node is ${pkg.engines.node}`).not.toBeNull();
    const [, major, minor] = minimum!.map(Number) as [number, number, number];
    expect(readme).toContain(`Needs Node.js ${major}.${minor} or newer`);
    const [runMajor, runMinor] = process.versions.node.split('.').map(Number) as [number, number];
    expect(runMajor > major || (runMajor === major && runMinor >= minor), `running ${process.version}`).toBe(true);
  });
});
