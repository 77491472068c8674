import { bundledSkills, checkSkillRuntime, DEFAULT_STARLARK_LIMITS, starlarkToolBindings } from '@agent-platform/domain';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildInterpreter,
  ENABLE_STARLARK,
  findGoToolchain,
  interpreterFiles,
  sha256,
  SOURCE_DIR,
  starlarkSourceSha256,
} from './interpreter-build.ts';
import { prebuiltFiles, readPrebuiltManifest, UPDATE_PREBUILT } from './prebuilt.ts';
import { loadStarlarkRunner, type WasmStarlarkRunner } from './wasm-starlark-runner.ts';

// The committed interpreter (libs/starlark/prebuilt, docs/skills.md "The interpreter"): what a
// machine without Go runs, checked against its manifest everywhere and rebuilt byte for byte
// wherever Go and Debian's go.starlark.net are installed (always under CI=true: .ci/run installs them).
const manifest = await readPrebuiltManifest();
const files = prebuiltFiles();
const regenerate = `regenerate it (needs Go): ${UPDATE_PREBUILT}`;

describe('the committed prebuilt interpreter', () => {
  it('is the interpreter its manifest names, made from the current main.go', async () => {
    const wasm = gunzipSync(await readFile(files.wasmGz));
    expect(sha256(wasm), 'libs/starlark/prebuilt/starlark.wasm.gz is not the interpreter manifest.json names').toBe(manifest.wasm_sha256);
    expect(wasm.length).toBe(manifest.wasm_bytes);
    expect(sha256(await readFile(files.wasmExec))).toBe(manifest.wasm_exec_sha256);
    const mainGo = sha256(await readFile(join(SOURCE_DIR, 'main.go')));
    expect(mainGo, `libs/starlark/go/main.go changed since the prebuilt interpreter was made; ${regenerate}`).toBe(manifest.main_go_sha256);
  });

  // The platform's Starlark path on a machine without Go: nothing built, the build finds no Go,
  // and a bundled starlark skill still installs and answers its tool calls.
  describe('runs on its own, where nothing was built and Go is missing', () => {
    let dir: string;
    let runner: WasmStarlarkRunner | null;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'starlark-no-go-'));
      expect(await buildInterpreter({ env: { PATH: join(dir, 'no-bin') }, dir })).toEqual({ status: 'no-go', hint: ENABLE_STARLARK });
      runner = loadStarlarkRunner({ dir });
    });
    afterAll(async () => {
      await runner?.close();
      await rm(dir, { recursive: true, force: true });
    });

    it('loads the prebuilt interpreter and runs a program on it', async () => {
      expect(runner?.interpreter.kind).toBe('prebuilt');
      const source = 'def total(args):\n    s = 0\n    for x in args["items"]:\n        s += x\n    return {"sum": s, "n": len(args["items"])}\n';
      const limits = { maxSteps: 100_000, timeoutMs: 10_000 };
      expect(await runner!.call(source, 'tools.star', 'total', '{"items":[1,2,3.5]}', limits)).toEqual({
        ok: true,
        value: '{"n":3,"sum":6.5}',
      });
    });

    it('installs and calls a bundled starlark skill', async () => {
      const skill = (await bundledSkills()).get('premium-calc')!;
      await expect(checkSkillRuntime('premium-calc', skill, { starlark: runner!, limits: () => DEFAULT_STARLARK_LIMITS })).resolves.toBeUndefined();
      const payout = starlarkToolBindings(skill, runner).find((b) => b.spec.name === 'claim_payout')!;
      expect(JSON.parse(await payout.execute({ loss: 12000, deductible: 1000, limit: 10000, coinsurance_pct: 80 }, {}))).toEqual({
        payable: 8800,
        retained_by_insured: 3200,
        capped_at_limit: false,
      });
    });
  });
});

// Go and the starlark source, by the project rule (STYLE §5): present, the rebuild runs; missing
// under CI=true, the suite fails; missing elsewhere, it is skipped with the reason printed.
const toolchain = await findGoToolchain(process.env);
if (toolchain.status !== 'ok') {
  const reason = `${toolchain.status === 'no-go' ? 'Go is not installed' : 'the go.starlark.net source is not installed'} (${ENABLE_STARLARK})`;
  if (process.env.CI === 'true') throw new Error(`the prebuilt interpreter's rebuild check: ${reason}; CI must run it`);
  console.warn(`skipping the prebuilt interpreter's rebuild check: ${reason}`);
}

describe.skipIf(toolchain.status !== 'ok')('the prebuilt interpreter, rebuilt on this machine', () => {
  const ok = toolchain.status === 'ok' ? toolchain : null;

  it("is made by this machine's Go and go.starlark.net source", async () => {
    expect(ok!.goVersion, `the prebuilt interpreter was made with ${manifest.go}, this machine has ${ok!.goVersion}; ${regenerate}`).toBe(manifest.go);
    expect(
      await starlarkSourceSha256(ok!.gopath),
      `the prebuilt interpreter was made from ${manifest.starlark_package ?? 'another go.starlark.net'}, this machine's differs (${ok!.gopath}); ${regenerate}`,
    ).toBe(manifest.starlark_source_sha256);
  });

  it('rebuilds byte for byte', { timeout: 180_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'starlark-rebuild-'));
    try {
      expect(await buildInterpreter({ env: process.env, dir })).toEqual({ status: 'built', wasm: interpreterFiles(dir).wasm });
      const rebuilt = await readFile(interpreterFiles(dir).wasm);
      expect(sha256(rebuilt), `this machine's build differs from the prebuilt interpreter; ${regenerate}`).toBe(manifest.wasm_sha256);
      expect(rebuilt.equals(gunzipSync(await readFile(files.wasmGz)))).toBe(true);
      expect((await readFile(interpreterFiles(dir).wasmExec)).equals(await readFile(files.wasmExec))).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
