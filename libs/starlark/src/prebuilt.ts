import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';
import {
  buildInterpreter,
  debianPackageOf,
  DEFAULT_BUILD_DIR,
  findGoToolchain,
  GO_BUILD_COMMAND,
  interpreterFiles,
  isInterpreterBuilt,
  sha256,
  SOURCE_DIR,
  starlarkSourceSha256,
  wasmExecOf,
  type BuildOptions,
} from './interpreter-build.ts';

/**
 * libs/starlark/prebuilt: the committed interpreter, used where this machine built none (no Go).
 * CI rebuilds it from Debian's Go and go.starlark.net and compares the bytes (prebuilt.test.ts).
 */
export const PREBUILT_DIR = fileURLToPath(new URL('../prebuilt/', import.meta.url));
/** Regenerates libs/starlark/prebuilt after a change of main.go or of the Go/starlark packages. */
export const UPDATE_PREBUILT = 'npx tsx scripts/build-starlark.ts --update-prebuilt';
const ENABLE_GO = 'apt-get install golang-go golang-starlark-dev';

export interface PrebuiltFiles {
  /** starlark.wasm, gzipped (the bytes that count are the unzipped ones: manifest `wasm_sha256`). */
  wasmGz: string;
  wasmExec: string;
  manifest: string;
}

export function prebuiltFiles(dir: string = PREBUILT_DIR): PrebuiltFiles {
  return { wasmGz: join(dir, 'starlark.wasm.gz'), wasmExec: join(dir, 'wasm_exec.js'), manifest: join(dir, 'manifest.json') };
}

/** What the prebuilt interpreter is and how it was made (libs/starlark/prebuilt/manifest.json). */
export interface PrebuiltManifest {
  /** `go env GOVERSION` of the Go that compiled it, e.g. go1.19.8. */
  go: string;
  /** `go version` on the machine that made it (its host platform does not change the bytes). */
  go_version: string;
  /** The Debian package of that Go, e.g. `golang-1.19-go 1.19.8-2`; null off Debian. */
  go_package: string | null;
  /** The Debian package of go.starlark.net, e.g. `golang-starlark-dev 0.0~git20210122.f935de8-2`. */
  starlark_package: string | null;
  /** `starlarkSourceSha256`: every non-test .go file of go.starlark.net, by path and content. */
  starlark_source_sha256: string;
  main_go_sha256: string;
  build: string;
  wasm_sha256: string;
  wasm_bytes: number;
  wasm_exec_sha256: string;
}

export async function readPrebuiltManifest(dir: string = PREBUILT_DIR): Promise<PrebuiltManifest> {
  return JSON.parse(await readFile(prebuiltFiles(dir).manifest, 'utf8')) as PrebuiltManifest;
}

export function isPrebuiltPresent(dir: string = PREBUILT_DIR): boolean {
  const files = prebuiltFiles(dir);
  return existsSync(files.wasmGz) && existsSync(files.wasmExec);
}

/** Where the runner takes the interpreter from: this machine's build, else the prebuilt one. */
export type InterpreterSource =
  | { kind: 'build'; dir: string; wasm: string; wasmExec: string }
  | { kind: 'prebuilt'; dir: string; wasmGz: string; wasmExec: string };

export interface InterpreterLocation {
  /** Where the build put the interpreter; default libs/starlark/build. */
  dir?: string;
  /** The committed interpreter; default libs/starlark/prebuilt. */
  prebuiltDir?: string;
}

export function findInterpreter(location: InterpreterLocation = {}): InterpreterSource | null {
  const dir = location.dir ?? DEFAULT_BUILD_DIR;
  if (isInterpreterBuilt(dir)) {
    const { wasm, wasmExec } = interpreterFiles(dir);
    return { kind: 'build', dir, wasm, wasmExec };
  }
  const prebuiltDir = location.prebuiltDir ?? PREBUILT_DIR;
  if (isPrebuiltPresent(prebuiltDir)) {
    const { wasmGz, wasmExec } = prebuiltFiles(prebuiltDir);
    return { kind: 'prebuilt', dir: prebuiltDir, wasmGz, wasmExec };
  }
  return null;
}

/** The interpreter's WebAssembly bytes and its wasm_exec.js. */
export async function readInterpreter(source: InterpreterSource): Promise<{ wasm: Buffer; wasmExec: string }> {
  const [wasm, wasmExec] = await Promise.all([
    source.kind === 'build' ? readFile(source.wasm) : readFile(source.wasmGz).then((gz) => gunzipSync(gz)),
    readFile(source.wasmExec, 'utf8'),
  ]);
  return { wasm, wasmExec };
}

export type UpdateOutcome =
  | { status: 'updated' | 'unchanged'; manifest: PrebuiltManifest }
  | { status: 'no-go' | 'no-starlark-source'; hint: string };

/**
 * Rebuilds the interpreter in a temporary directory and writes it to libs/starlark/prebuilt
 * with its manifest. The gzip is rewritten only when the unzipped bytes change (zlib versions
 * may compress the same bytes differently).
 */
export async function updatePrebuilt(options: BuildOptions & { prebuiltDir?: string }): Promise<UpdateOutcome> {
  const toolchain = await findGoToolchain(options.env);
  if (toolchain.status !== 'ok') {
    return { status: toolchain.status, hint: `${ENABLE_GO}, then run ${UPDATE_PREBUILT}` };
  }
  const target = prebuiltFiles(options.prebuiltDir);
  const work = await mkdtemp(join(tmpdir(), 'starlark-prebuilt-'));
  try {
    await buildInterpreter({ env: options.env, dir: work });
    const built = interpreterFiles(work);
    const [wasm, wasmExec, mainGo] = await Promise.all([
      readFile(built.wasm),
      readFile(built.wasmExec),
      readFile(join(SOURCE_DIR, 'main.go')),
    ]);
    const goRoot = (await wasmExecOf(options.env)).replace(/\/(misc|lib)\/wasm\/wasm_exec\.js$/, '');
    const manifest: PrebuiltManifest = {
      go: toolchain.goVersion,
      go_version: toolchain.version,
      go_package: await debianPackageOf(join(goRoot, 'bin', 'go')),
      starlark_package: await debianPackageOf(join(toolchain.gopath, 'src', 'go.starlark.net', 'starlark', 'eval.go')),
      starlark_source_sha256: await starlarkSourceSha256(toolchain.gopath),
      main_go_sha256: sha256(mainGo),
      build: GO_BUILD_COMMAND,
      wasm_sha256: sha256(wasm),
      wasm_bytes: wasm.length,
      wasm_exec_sha256: sha256(wasmExec),
    };
    const dir = options.prebuiltDir ?? PREBUILT_DIR;
    await mkdir(dir, { recursive: true });
    const current = await readFile(target.wasmGz).then((gz) => gunzipSync(gz)).catch(() => null);
    const previous = await readFile(target.manifest, 'utf8').catch(() => null);
    const text = `${JSON.stringify(manifest, null, 2)}\n`;
    const unchanged = current !== null && current.equals(wasm) && previous === text;
    if (current === null || !current.equals(wasm)) {
      await writeFile(`${target.wasmGz}.tmp`, gzipSync(wasm, { level: 9 }));
      await rename(`${target.wasmGz}.tmp`, target.wasmGz);
    }
    await copyFile(built.wasmExec, target.wasmExec);
    await writeFile(target.manifest, text);
    return { status: unchanged ? 'unchanged' : 'updated', manifest };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
