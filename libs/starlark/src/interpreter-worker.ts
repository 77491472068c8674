import { Worker } from 'node:worker_threads';
import type { StarlarkFailure, StarlarkOutcome } from './starlark-types.ts';
import type { WasmModule } from './wasm-module.ts';
import { WORKER_SOURCE } from './worker-source.ts';

export interface WorkerJob {
  op: 'check' | 'call';
  args: Array<string | number>;
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * One interpreter worker thread running one job at a time. A job that passes its time limit or
 * whose signal fires terminates the thread (a synchronous wasm loop cannot be interrupted any
 * other way): the worker is then `dead` and the pool starts another one.
 */
export class InterpreterWorker {
  private readonly worker: Worker;
  private readonly started: Promise<void>;
  private current: ((outcome: StarlarkOutcome<unknown>) => void) | null = null;
  private nextId = 1;
  dead = false;

  constructor(module: WasmModule, wasmExec: string) {
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { module, wasmExec } });
    // An idle worker must not keep the process alive.
    this.worker.unref();
    this.started = new Promise((resolve, reject) => {
      this.worker.once('message', (message: { ready?: true; fatal?: string }) => {
        if (message.ready === true) resolve();
        else reject(new Error(`the Starlark interpreter did not start: ${message.fatal ?? 'no reason given'}`));
      });
      this.worker.once('error', reject);
    });
    this.started.catch(() => (this.dead = true));
    this.worker.on('error', (error) => this.finish(crashed(`the Starlark interpreter failed: ${error.message}`)));
    this.worker.on('exit', () => {
      this.dead = true;
      this.finish(crashed('the Starlark interpreter stopped unexpectedly'));
    });
  }

  /** Resolves when the interpreter is loaded; rejects when it cannot start. */
  ready(): Promise<void> {
    return this.started;
  }

  run(job: WorkerJob): Promise<StarlarkOutcome<unknown>> {
    if (job.signal?.aborted === true) return Promise.resolve(aborted());
    const id = this.nextId++;
    return new Promise((resolve) => {
      const onAbort = (): void => this.kill(aborted());
      const timer = setTimeout(
        () => this.kill(failure('timeout', `stopped after ${job.timeoutMs} ms, the time limit`)),
        job.timeoutMs,
      );
      const onMessage = (message: { id?: number; text?: string }): void => {
        if (message.id === id) this.finish(parse(message.text ?? ''));
      };
      this.current = (outcome) => {
        clearTimeout(timer);
        job.signal?.removeEventListener('abort', onAbort);
        this.worker.off('message', onMessage);
        this.current = null;
        resolve(outcome);
      };
      job.signal?.addEventListener('abort', onAbort, { once: true });
      this.worker.on('message', onMessage);
      this.worker.postMessage({ id, op: job.op, args: job.args });
    });
  }

  async close(): Promise<void> {
    this.dead = true;
    await this.worker.terminate();
  }

  private finish(outcome: StarlarkOutcome<unknown>): void {
    this.current?.(outcome);
  }

  private kill(outcome: StarlarkOutcome<unknown>): void {
    this.dead = true;
    this.finish(outcome);
    void this.worker.terminate();
  }
}

function parse(text: string): StarlarkOutcome<unknown> {
  try {
    const parsed = JSON.parse(text) as { ok: boolean; value?: unknown; error?: StarlarkFailure };
    if (parsed.ok) return { ok: true, value: parsed.value };
    if (parsed.error !== undefined) return { ok: false, error: parsed.error };
  } catch {
    // Falls through to the crash below.
  }
  return crashed('the Starlark interpreter answered something unreadable');
}

function failure(kind: StarlarkFailure['kind'], message: string): StarlarkOutcome<never> {
  return { ok: false, error: { kind, message } };
}

const crashed = (message: string): StarlarkOutcome<never> => failure('crashed', message);
const aborted = (): StarlarkOutcome<never> => failure('aborted', 'the call was cancelled');
