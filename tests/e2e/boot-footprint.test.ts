import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatformFixture, type PlatformFixture } from '../../bench/platform-fixture.ts';

// What the all-in-one loads to serve sends (docs/performance.md "Memory"): the packages only a
// few deployments use are loaded by their first use, not at boot. Each of these held megabytes of
// heap for nothing (the MCP SDK and zod about 7 MB). A static import of one of them anywhere on
// the boot path fails this test.
const LOADED_ON_FIRST_USE = ['@modelcontextprotocol/sdk', 'zod', 'nodemailer', 'smtp-server', 'mailparser', 'mqtt', 'pdfkit', 'fontkit', '@aws-sdk/client-s3'];

describe('the all-in-one at boot and under sends', () => {
  let dir: string;
  let platform: PlatformFixture | undefined;
  let loadedFile: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ap-footprint-'));
    loadedFile = join(dir, 'loaded.txt');
    // A module loader hook that writes down every module the platform loads.
    const hooks = join(dir, 'hooks.mjs');
    await writeFile(
      hooks,
      `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) { appendFileSync(${JSON.stringify(loadedFile)}, url + '\\n'); return next(url, context); }`,
    );
    const register = join(dir, 'register.mjs');
    await writeFile(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
    platform = await startPlatformFixture({ nodeFlags: ['--import', pathToFileURL(register).href], installAgent: true });
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('loads none of the packages kept for their first use', async () => {
    const { url, token, agentId } = platform!;
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${url}/agents/${agentId}/send`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ message: `footprint ${i}` }),
      });
      expect(res.status).toBe(200);
    }
    const loaded = (await readFile(loadedFile, 'utf8')).split('\n');
    // The hook saw the platform's own modules: it works.
    expect(loaded.some((u) => u.endsWith('/apps/platform/src/main.ts'))).toBe(true);
    const heavy = LOADED_ON_FIRST_USE.filter((name) => loaded.some((u) => u.includes(`/node_modules/${name}/`)));
    expect(heavy).toEqual([]);
  });
});
