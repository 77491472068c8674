import { LOST_REASON, type JobHandler, type ProcessOptions, type Worker } from '../queue.ts';
import type { Claim, JobTable } from './job-table.ts';

export interface WorkerDeps {
  jobs: JobTable;
  now: () => number;
  leaseMs: number;
  /** Asks the queue for another poll soon: a slot came free. */
  wake: () => void;
  onError: (error: unknown) => void;
}

/**
 * Runs the jobs of one queue name, up to `concurrency` at once. While a handler runs its lease
 * is renewed every third of `leaseMs`, so only a process that really stopped loses its jobs.
 */
export class EmbeddedWorker implements Worker {
  private readonly running = new Set<Promise<void>>();
  private closed = false;

  constructor(
    readonly queue: string,
    private readonly handler: JobHandler<unknown>,
    private readonly concurrency: number,
    private readonly deps: WorkerDeps,
    private readonly onLost?: ProcessOptions<unknown>['onLost'],
  ) {}

  /** Claims due jobs until every slot is busy or nothing is due. */
  fill(): void {
    while (!this.closed && this.running.size < this.concurrency) {
      const claim = this.deps.jobs.claim(this.queue, this.deps.now(), this.deps.leaseMs, this.onLost !== undefined);
      if (!claim) return;
      const run = this.run(claim).finally(() => {
        this.running.delete(run);
        if (!this.closed) this.deps.wake();
      });
      this.running.add(run);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    while (this.running.size > 0) await Promise.all([...this.running]);
  }

  private async run({ job, token, lost }: Claim): Promise<void> {
    const { jobs, now, leaseMs } = this.deps;
    const heartbeat = setInterval(() => {
      try {
        jobs.renew(job.queue, job.id, token, now() + leaseMs);
      } catch (error) {
        this.deps.onError(error);
      }
    }, Math.max(1, Math.floor(leaseMs / 3)));
    heartbeat.unref();
    let failure: unknown = null;
    let failed = false;
    try {
      if (lost) await this.onLost!(job, LOST_REASON);
      else await this.handler(job);
    } catch (error) {
      failed = true;
      failure = error;
    } finally {
      clearInterval(heartbeat);
    }
    try {
      if (lost) {
        if (failed) this.deps.onError(failure);
        jobs.failLost(job.queue, job.id, token, now());
      } else if (failed) jobs.fail(job.queue, job.id, token, errorText(failure), now());
      else jobs.complete(job.queue, job.id, token);
    } catch (error) {
      // The job stays running; once its lease expires another poll will retry it.
      this.deps.onError(error);
    }
  }
}

function errorText(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return typeof error === 'string' ? error : JSON.stringify(error) ?? String(error);
}
