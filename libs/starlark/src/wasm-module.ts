/**
 * A compiled WebAssembly module. Node has the WebAssembly API, but the project's `lib` (ES2023,
 * no DOM) does not declare it, so this names the one part used here.
 */
export interface WasmModule {
  readonly __brand: 'WebAssembly.Module';
}

interface WebAssemblyApi {
  compile(bytes: Uint8Array): Promise<WasmModule>;
}

export function compileWasm(bytes: Uint8Array): Promise<WasmModule> {
  return (globalThis as unknown as { WebAssembly: WebAssemblyApi }).WebAssembly.compile(bytes);
}
