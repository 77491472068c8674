// Builds the Starlark interpreter of libs/starlark (docs/skills.md "The interpreter"). Run by the
// root `npm install` (postinstall); idempotent and quick when already built; prints one line.
// A machine without Go gets the committed prebuilt interpreter (libs/starlark/prebuilt), never a
// failure. `--update-prebuilt` regenerates that prebuilt interpreter (needs Go).
import { buildInterpreter, PREBUILT_DIR, readPrebuiltManifest, updatePrebuilt } from '@agent-platform/starlark';
import { relative } from 'node:path';

const prebuilt = relative(process.cwd(), PREBUILT_DIR) || PREBUILT_DIR;

if (process.argv.includes('--update-prebuilt')) {
  const outcome = await updatePrebuilt({ env: process.env });
  if ('manifest' in outcome) {
    const { manifest } = outcome;
    console.log(
      `starlark: prebuilt interpreter ${outcome.status} (${prebuilt}: ${manifest.go}, ${manifest.starlark_package ?? 'go.starlark.net'}, wasm sha256 ${manifest.wasm_sha256})`,
    );
  } else {
    console.error(`starlark: cannot update the prebuilt interpreter (${outcome.status}): ${outcome.hint}`);
    process.exitCode = 1;
  }
} else {
  try {
    const outcome = await buildInterpreter({ env: process.env });
    if ('wasm' in outcome) {
      console.log(`starlark: interpreter ${outcome.status === 'built' ? 'built' : 'up to date'} (${outcome.wasm})`);
    } else {
      const missing = outcome.status === 'no-go' ? 'Go is not installed' : 'the go.starlark.net source is not installed';
      console.log(`starlark: ${missing}; ${await usingPrebuilt()}; to build it here instead: ${outcome.hint}`);
    }
  } catch (error) {
    // A failed build must not fail `npm install`: the prebuilt interpreter is used instead.
    console.log(`starlark: build failed (${(error as Error).message.split('\n').slice(0, 5).join(' ')}); ${await usingPrebuilt()}`);
  }
}

async function usingPrebuilt(): Promise<string> {
  const manifest = await readPrebuiltManifest().catch(() => null);
  if (manifest === null) return `the prebuilt interpreter (${prebuilt}) is missing too, so starlark skills are disabled`;
  return `using the prebuilt interpreter (${prebuilt}, ${manifest.go})`;
}
