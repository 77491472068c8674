import { InterpreterWorker, type WorkerJob } from './interpreter-worker.ts';
import { findInterpreter, readInterpreter, type InterpreterLocation, type InterpreterSource } from './prebuilt.ts';
import { compileWasm, type WasmModule } from './wasm-module.ts';
import type { StarlarkLimits, StarlarkModuleInfo, StarlarkOutcome, StarlarkRunner } from './starlark-types.ts';

export interface WasmStarlarkRunnerOptions extends InterpreterLocation {
  /** Runs at once (one worker thread each); default 2. Further runs wait for a free worker. */
  maxWorkers?: number;
}

export interface WasmStarlarkRunner extends StarlarkRunner {
  /** Where its interpreter comes from: this machine's build, or the committed prebuilt one. */
  readonly interpreter: InterpreterSource;
  /** Terminates the worker threads; later runs start new ones. */
  close(): Promise<void>;
}

/**
 * The interpreter (libs/starlark/go, WebAssembly), run in worker threads: the one `npm install`
 * built on this machine, else the committed prebuilt one (libs/starlark/prebuilt, for a machine
 * without Go); null only when neither is there. The module is compiled once, on first use, and
 * shared by every worker; a worker stays loaded between runs and is replaced when a run is
 * stopped by its time limit or signal.
 */
export function loadStarlarkRunner(options: WasmStarlarkRunnerOptions = {}): WasmStarlarkRunner | null {
  const interpreter = findInterpreter(options);
  if (interpreter === null) return null;
  return createWasmStarlarkRunner(interpreter, options.maxWorkers ?? 2);
}

function createWasmStarlarkRunner(interpreter: InterpreterSource, maxWorkers: number): WasmStarlarkRunner {
  let loaded: Promise<{ module: WasmModule; wasmExec: string }> | null = null;
  const load = (): Promise<{ module: WasmModule; wasmExec: string }> => {
    loaded ??= (async () => {
      const { wasm, wasmExec } = await readInterpreter(interpreter);
      return { module: await compileWasm(wasm), wasmExec };
    })();
    loaded.catch(() => (loaded = null));
    return loaded;
  };
  const idle: InterpreterWorker[] = [];
  const waiting: Array<() => void> = [];
  let live = 0;

  async function acquire(): Promise<InterpreterWorker> {
    for (;;) {
      const worker = idle.pop();
      if (worker !== undefined && !worker.dead) return worker;
      if (worker !== undefined) {
        live -= 1;
        continue;
      }
      if (live < maxWorkers) {
        live += 1;
        try {
          const { module, wasmExec } = await load();
          const fresh = new InterpreterWorker(module, wasmExec);
          await fresh.ready();
          return fresh;
        } catch (error) {
          live -= 1;
          waiting.shift()?.();
          throw error;
        }
      }
      await new Promise<void>((resolve) => waiting.push(resolve));
    }
  }

  function release(worker: InterpreterWorker): void {
    if (worker.dead) live -= 1;
    else idle.push(worker);
    waiting.shift()?.();
  }

  async function run(job: WorkerJob): Promise<StarlarkOutcome<unknown>> {
    let worker: InterpreterWorker;
    try {
      worker = await acquire();
    } catch (error) {
      return { ok: false, error: { kind: 'crashed', message: (error as Error).message } };
    }
    try {
      return await worker.run(job);
    } finally {
      release(worker);
    }
  }

  return {
    interpreter,
    async check(source, filename, limits) {
      const job = { op: 'check' as const, args: [source, filename, steps(limits)], timeoutMs: time(limits) };
      return (await run(job)) as StarlarkOutcome<StarlarkModuleInfo>;
    },
    async call(source, filename, fn, argsJson, limits) {
      const job: WorkerJob = { op: 'call', args: [source, filename, fn, argsJson, steps(limits)], timeoutMs: time(limits) };
      if (limits.signal !== undefined) job.signal = limits.signal;
      return (await run(job)) as StarlarkOutcome<string>;
    },
    async close() {
      const workers = idle.splice(0);
      live -= workers.length;
      await Promise.all(workers.map((w) => w.close()));
    },
  };
}

function steps(limits: StarlarkLimits): number {
  if (!Number.isSafeInteger(limits.maxSteps) || limits.maxSteps < 1)
    throw new RangeError(`maxSteps must be a positive integer (got ${limits.maxSteps})`);
  return limits.maxSteps;
}

function time(limits: StarlarkLimits): number {
  if (!Number.isFinite(limits.timeoutMs) || limits.timeoutMs <= 0)
    throw new RangeError(`timeoutMs must be a positive number (got ${limits.timeoutMs})`);
  return limits.timeoutMs;
}
