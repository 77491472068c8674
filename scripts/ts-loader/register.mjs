// Runs the platform's TypeScript sources on Node 20: `node --import <this file> apps/platform/src/main.ts`
// (what `npm start` does). The hooks (hooks.mjs) compile each `.ts` module with esbuild, cached on
// disk. Why not tsx, which the tests and scripts use: tsx compiles with esbuild's `keepNames`,
// which wraps every function in a call that redefines its `name`, so each closure made per request
// costs about 300 ns more and carries a property array of its own (docs/performance.md "How the
// platform's processes load TypeScript").
import { register } from 'node:module';

// Stack traces point at the TypeScript lines (the compiled code carries an inline source map).
process.setSourceMapsEnabled(true);
register('./hooks.mjs', import.meta.url);
