import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** How a machine gets its own build of the interpreter (README "Skills", docs/skills.md). */
export const ENABLE_STARLARK = 'apt-get install golang-go golang-starlark-dev && npm install';

/** Where the build writes the interpreter: libs/starlark/build/ (gitignored). */
export const DEFAULT_BUILD_DIR = fileURLToPath(new URL('../build/', import.meta.url));
/** libs/starlark/go: the interpreter's source, main.go. */
export const SOURCE_DIR = fileURLToPath(new URL('../go/', import.meta.url));
/** Where Debian's golang-starlark-dev puts go.starlark.net. */
const DEBIAN_GOPATH = '/usr/share/gocode';

/**
 * The reproducible build (docs/skills.md "The interpreter"): the same Go release and the same
 * go.starlark.net source give the same bytes in any checkout path, with any cache. `main.go` is
 * named as a file, so the package is `command-line-arguments`, not GOPATH mode's `_/<checkout
 * path>`; `-trimpath` drops the remaining paths; `-buildid=` drops the build ID, a hash of
 * inputs that include the checkout path.
 */
export const GO_BUILD_ARGS = ['build', '-trimpath', '-buildvcs=false', '-ldflags=-s -w -buildid='] as const;
/** The build as one shell line, for the manifest and the docs. */
export const GO_BUILD_COMMAND =
  "GO111MODULE=off GOPATH=/usr/share/gocode GOOS=js GOARCH=wasm go build -trimpath -buildvcs=false -ldflags='-s -w -buildid=' -o starlark.wasm main.go";

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

/** True when `npm install` built the interpreter on this machine (the prebuilt aside). */
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

/** The Go toolchain and the go.starlark.net source a build would use, or why there is none. */
export type GoToolchain =
  | { status: 'ok'; version: string; goVersion: string; gopath: string }
  | { status: 'no-go' | 'no-starlark-source' };

export async function findGoToolchain(env: BuildOptions['env']): Promise<GoToolchain> {
  let version: string;
  let goVersion: string;
  try {
    version = (await run('go', ['version'], { env: goEnv(env) })).stdout.trim();
    goVersion = (await run('go', ['env', 'GOVERSION'], { env: goEnv(env) })).stdout.trim();
  } catch {
    return { status: 'no-go' };
  }
  const gopath = starlarkGopath(env);
  if (gopath === null) return { status: 'no-starlark-source' };
  return { status: 'ok', version, goVersion, gopath };
}

/**
 * Builds the interpreter (GOOS=js GOARCH=wasm, GOPATH mode over Debian's go.starlark.net: no
 * module download, no network). Idempotent: a build whose stamp (source hash, Go version, the
 * starlark source found, the build flags) matches is kept. A machine without Go or without the
 * starlark source is not an error: the runner then uses the committed prebuilt interpreter.
 */
export async function buildInterpreter(options: BuildOptions): Promise<BuildOutcome> {
  const files = interpreterFiles(options.dir);
  const toolchain = await findGoToolchain(options.env);
  if (toolchain.status !== 'ok') return { status: toolchain.status, hint: ENABLE_STARLARK };
  const { version: go, gopath } = toolchain;
  const source = await readFile(join(SOURCE_DIR, 'main.go'));
  const stamp = JSON.stringify({ go, gopath, source: sha256(source), flags: GO_BUILD_ARGS });
  const previous = await readFile(files.stamp, 'utf8').catch(() => null);
  if (previous === stamp && isInterpreterBuilt(options.dir)) return { status: 'up-to-date', wasm: files.wasm };

  const dir = options.dir ?? DEFAULT_BUILD_DIR;
  await mkdir(dir, { recursive: true });
  const env: Record<string, string | undefined> = {
    ...goEnv(options.env),
    GO111MODULE: 'off',
    GOPATH: gopath,
    GOOS: 'js',
    GOARCH: 'wasm',
    GOPROXY: 'off',
    // Go's own cache (~/.cache/go-build) when there is a home; never inside the build output.
    GOCACHE: options.env.GOCACHE ?? (options.env.HOME ?? options.env.XDG_CACHE_HOME ? undefined : join(tmpdir(), 'agent-platform-go-cache')),
  };
  // Written beside the target and renamed: two installs at once never leave half a file.
  const tmp = `${files.wasm}.${process.pid}.tmp`;
  try {
    await run('go', [...GO_BUILD_ARGS, '-o', tmp, 'main.go'], { cwd: SOURCE_DIR, env });
    await rename(tmp, files.wasm);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
  await copyFile(await wasmExecOf(options.env), files.wasmExec);
  await writeFile(files.stamp, stamp);
  return { status: 'built', wasm: files.wasm };
}

/**
 * The caller's environment without the settings that would change the bytes Go writes (GOWASM,
 * GOEXPERIMENT, GOFLAGS) or make it fetch another toolchain (GOTOOLCHAIN).
 */
function goEnv(env: BuildOptions['env']): Record<string, string | undefined> {
  return { ...env, GOFLAGS: '', GOWASM: '', GOEXPERIMENT: '', GOTOOLCHAIN: 'local' };
}

/** The first GOPATH entry (the environment's, then Debian's) holding go.starlark.net. */
function starlarkGopath(env: BuildOptions['env']): string | null {
  const candidates = [...(env.GOPATH ?? '').split(delimiter).filter(Boolean), DEBIAN_GOPATH];
  return candidates.find((dir) => existsSync(join(dir, 'src', 'go.starlark.net', 'starlark'))) ?? null;
}

/** wasm_exec.js of the Go release: misc/wasm up to Go 1.23, lib/wasm since 1.24. */
export async function wasmExecOf(env: BuildOptions['env']): Promise<string> {
  const root = (await run('go', ['env', 'GOROOT'], { env: goEnv(env) })).stdout.trim();
  const found = ['misc/wasm/wasm_exec.js', 'lib/wasm/wasm_exec.js'].map((p) => join(root, p)).find((p) => existsSync(p));
  if (found === undefined) throw new Error(`wasm_exec.js not found under ${root}`);
  return found;
}

/**
 * One hash of the go.starlark.net source under `gopath`: every non-test .go file, by path and
 * content, in path order. Two machines with the same hash compile the same interpreter.
 */
export async function starlarkSourceSha256(gopath: string): Promise<string> {
  const root = join(gopath, 'src', 'go.starlark.net');
  const files: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.name.endsWith('.go') && !entry.name.endsWith('_test.go')) files.push(relative(root, path));
    }
  };
  await walk(root);
  const hash = createHash('sha256');
  for (const file of files.sort()) {
    const content = await readFile(join(root, file));
    hash.update(`${file}\0${content.length}\0`).update(content);
  }
  return hash.digest('hex');
}

/** The Debian package (and version) holding `path`, or null off Debian. */
export async function debianPackageOf(path: string): Promise<string | null> {
  try {
    const owner = (await run('dpkg-query', ['-S', path])).stdout.split(':')[0]?.trim();
    if (owner === undefined || owner === '') return null;
    const version = (await run('dpkg-query', ['-W', '-f=${Version}', owner])).stdout.trim();
    return `${owner} ${version}`;
  } catch {
    return null;
  }
}

export function sha256(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}
