// Module hooks of register.mjs: a `.ts` file under `file:` is compiled to an ES module by esbuild
// (types stripped, nothing bundled, names left as JavaScript gives them), with an inline source
// map. The output is cached under node_modules/.cache/agent-platform-ts, keyed by a hash of the
// source, the compiler's version and its options, so a changed file is compiled again and an
// unchanged one never is. Everything else goes to Node's own loader.
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transform, version } from 'esbuild';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CACHE_DIR = process.env.AP_TS_CACHE_DIR || join(ROOT, 'node_modules', '.cache', 'agent-platform-ts');

/** tsconfig.base.json's settings that change the output: class fields as ES2023 defines them, imports kept as written. */
const OPTIONS = {
  loader: 'ts',
  format: 'esm',
  target: `node${process.versions.node}`,
  sourcemap: 'inline',
  keepNames: false,
  tsconfigRaw: { compilerOptions: { target: 'ES2023', verbatimModuleSyntax: true } },
};
const OPTIONS_KEY = `${version}:${JSON.stringify(OPTIONS)}`;

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
  // The source comes through the hooks registered before these (a test's recording hook sees
  // every module), read by Node's loader as an ES module's.
  const loaded = await nextLoad(url, { ...context, format: 'module' });
  const source = typeof loaded.source === 'string' ? loaded.source : Buffer.from(loaded.source).toString('utf8');
  return { format: 'module', source: await compiled(fileURLToPath(url), source), shortCircuit: true };
}

async function compiled(path, source) {
  const key = createHash('sha256').update(OPTIONS_KEY).update('\0').update(path).update('\0').update(source).digest('hex');
  const cached = join(CACHE_DIR, key.slice(0, 2), `${key}.js`);
  try {
    return await readFile(cached, 'utf8');
  } catch {
    // Not compiled yet (or the cache was cleared): compile now.
  }
  const { code } = await transform(source, { ...OPTIONS, sourcefile: path });
  try {
    await mkdir(dirname(cached), { recursive: true });
    // Written aside then renamed: a process reading the cache never sees half a file.
    const partial = `${cached}.${process.pid}.${Math.random().toString(36).slice(2)}`;
    await writeFile(partial, code);
    await rename(partial, cached);
  } catch {
    // A read-only checkout runs uncached: slower to start, the same otherwise.
  }
  return code;
}
