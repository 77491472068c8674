import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** How a machine without the interpreter gets it (README "Skills", docs/skills.md). */
export const ENABLE_STARLARK = 'apt-get install golang-go golang-starlark-dev && npm install';

/** Where the build writes the interpreter: libs/starlark/build/ (gitignored). */
export const DEFAULT_BUILD_DIR = fileURLToPath(new URL('../build/', import.meta.url));
const SOURCE_DIR = fileURLToPath(new URL('../go/', import.meta.url));
/** Where Debian's golang-starlark-dev puts go.starlark.net. */
const DEBIAN_GOPATH = '/usr/share/gocode';

export interface InterpreterFiles {
  /** The Go program of libs/starlark/go, compiled to WebAssembly. */
  wasm: string;
  /** The JavaScript glue of the Go release that compiled it (they must match). */
  wasmExec: string;
  stamp: string;
}

export function interpreterFiles(dir: string = DEFAULT_BUILD_DIR): InterpreterFiles {
  return { wasm: join(dir, 'starlark.wasm'), wasmExec: join(dir, 'wasm_exec.js'), stamp: join(dir, 'stamp.json') };
}

/** True when `npm install` built the interpreter on this machine. */
export function isInterpreterBuilt(dir: string = DEFAULT_BUILD_DIR): boolean {
  const files = interpreterFiles(dir);
  return existsSync(files.wasm) && existsSync(files.wasmExec);
}

export type BuildOutcome =
  | { status: 'built' | 'up-to-date'; wasm: string }
  | { status: 'no-go' | 'no-starlark-source'; hint: string };

export interface BuildOptions {
  env: Record<string, string | undefined>;
  dir?: string;
}

/**
 * Builds the interpreter (GOOS=js GOARCH=wasm, GOPATH mode over Debian's go.starlark.net: no
 * module download, no network). Idempotent: a build whose stamp (source hash, Go version, the
 * starlark source found) matches is kept. A machine without Go or without the starlark source
 * is not an error: the platform runs without starlark skills and says how to enable them.
 */
export async function buildInterpreter(options: BuildOptions): Promise<BuildOutcome> {
  const files = interpreterFiles(options.dir);
  const go = await goVersion(options.env);
  if (go === null) return { status: 'no-go', hint: ENABLE_STARLARK };
  const gopath = starlarkGopath(options.env);
  if (gopath === null) return { status: 'no-starlark-source', hint: ENABLE_STARLARK };
  const source = await readFile(join(SOURCE_DIR, 'main.go'));
  const stamp = JSON.stringify({ go, gopath, source: createHash('sha256').update(source).digest('hex') });
  const previous = await readFile(files.stamp, 'utf8').catch(() => null);
  if (previous === stamp && isInterpreterBuilt(options.dir)) return { status: 'up-to-date', wasm: files.wasm };

  const dir = options.dir ?? DEFAULT_BUILD_DIR;
  await mkdir(dir, { recursive: true });
  const env: Record<string, string | undefined> = {
    ...options.env,
    GO111MODULE: 'off',
    GOPATH: gopath,
    GOOS: 'js',
    GOARCH: 'wasm',
    GOFLAGS: '',
    GOPROXY: 'off',
    // Go's own cache (~/.cache/go-build) when there is a home; never inside the build output.
    GOCACHE: options.env.GOCACHE ?? (options.env.HOME ?? options.env.XDG_CACHE_HOME ? undefined : join(tmpdir(), 'agent-platform-go-cache')),
  };
  // Written beside the target and renamed: two installs at once never leave half a file.
  const tmp = `${files.wasm}.${process.pid}.tmp`;
  try {
    await run('go', ['build', '-trimpath', '-ldflags=-s -w', '-o', tmp, '.'], { cwd: SOURCE_DIR, env });
    await rename(tmp, files.wasm);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
  await copyFile(await wasmExecOf(options.env), files.wasmExec);
  await writeFile(files.stamp, stamp);
  return { status: 'built', wasm: files.wasm };
}

async function goVersion(env: BuildOptions['env']): Promise<string | null> {
  try {
    return (await run('go', ['version'], { env })).stdout.trim();
  } catch {
    return null;
  }
}

/** The first GOPATH entry (the environment's, then Debian's) holding go.starlark.net. */
function starlarkGopath(env: BuildOptions['env']): string | null {
  const candidates = [...(env.GOPATH ?? '').split(delimiter).filter(Boolean), DEBIAN_GOPATH];
  return candidates.find((dir) => existsSync(join(dir, 'src', 'go.starlark.net', 'starlark'))) ?? null;
}

/** wasm_exec.js of the Go release: misc/wasm up to Go 1.23, lib/wasm since 1.24. */
async function wasmExecOf(env: BuildOptions['env']): Promise<string> {
  const root = (await run('go', ['env', 'GOROOT'], { env })).stdout.trim();
  const found = ['misc/wasm/wasm_exec.js', 'lib/wasm/wasm_exec.js'].map((p) => join(root, p)).find((p) => existsSync(p));
  if (found === undefined) throw new Error(`wasm_exec.js not found under ${root}`);
  return found;
}
