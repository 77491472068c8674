/**
 * The code of one interpreter worker thread (run with `eval: true`, so it is CommonJS and needs
 * no file of its own). It runs Go's wasm_exec.js and the interpreter inside a fresh `vm` context
 * whose global object holds only what the Go runtime needs: no `require`, no `process`, no `fs`
 * (wasm_exec.js then installs its own stubs, which answer every file call with ENOSYS), no
 * network, and a `console` that drops output. The interpreter's functions are synchronous: a
 * runaway run blocks this thread until the host terminates it.
 *
 * Messages in: `{id, op: 'check' | 'call', args: [...]}`. Out: `{ready: true}` once, then
 * `{id, text}` with the interpreter's JSON answer, or `{fatal}` when the interpreter cannot start.
 */
export const WORKER_SOURCE = String.raw`
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const { randomFillSync } = require('node:crypto');
const { TextEncoder, TextDecoder } = require('node:util');
const vm = require('node:vm');

try {
  const quiet = () => undefined;
  const sandbox = {
    TextEncoder,
    TextDecoder,
    performance: { now: () => performance.now() },
    crypto: { getRandomValues: (bytes) => randomFillSync(bytes) },
    setTimeout,
    clearTimeout,
    console: { log: quiet, warn: quiet, error: quiet },
  };
  const context = vm.createContext(sandbox, { codeGeneration: { strings: false, wasm: true } });
  vm.runInContext(workerData.wasmExec, context, { filename: 'wasm_exec.js' });
  let ready = false;
  context.starlarkReady = () => { ready = true; };
  const start = vm.runInContext(
    '(module) => { const go = new Go(); go.run(new WebAssembly.Instance(module, go.importObject)); }',
    context,
  );
  start(workerData.module);
  if (!ready) throw new Error('the interpreter did not start');
  const check = context.starlarkCheck;
  const call = context.starlarkCall;
  parentPort.on('message', ({ id, op, args }) => {
    const text = op === 'check' ? check(...args) : call(...args);
    parentPort.postMessage({ id, text });
  });
  parentPort.postMessage({ ready: true });
} catch (error) {
  parentPort.postMessage({ fatal: String(error && error.stack || error) });
}
`;
