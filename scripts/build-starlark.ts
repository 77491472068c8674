// Builds the Starlark interpreter of libs/starlark (docs/skills.md "The interpreter"). Run by the
// root `npm install` (postinstall); idempotent and quick when already built; prints one line.
// A machine without Go gets a hint, not a failure: the platform runs without starlark skills.
import { buildInterpreter } from '@agent-platform/starlark';

try {
  const outcome = await buildInterpreter({ env: process.env });
  if ('wasm' in outcome) {
    console.log(`starlark: interpreter ${outcome.status === 'built' ? 'built' : 'up to date'} (${outcome.wasm})`);
  } else {
    const missing = outcome.status === 'no-go' ? 'Go is not installed' : 'the go.starlark.net source is not installed';
    console.log(`starlark: not built (${missing}); starlark skills are disabled. To enable them: ${outcome.hint}`);
  }
} catch (error) {
  // A failed build must not fail `npm install`: the rest of the platform works without it.
  console.log(`starlark: build failed, starlark skills are disabled: ${(error as Error).message.split('\n').slice(0, 5).join(' ')}`);
}
