export * from './starlark-types.ts';
export * from './interpreter-build.ts';
export * from './prebuilt.ts';
export * from './wasm-starlark-runner.ts';
