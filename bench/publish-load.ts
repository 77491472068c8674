import { selfTimedResult } from './latency.ts';
import type { LoadResult } from './target.ts';

/** Archives handed out in order, each once: a version published twice would be a 409, not a publish. */
export interface ArchivePool {
  next(): Buffer | undefined;
  readonly remaining: number;
}

export function archivePool(archives: readonly Buffer[]): ArchivePool {
  let at = 0;
  return {
    next: () => archives[at++],
    get remaining() {
      return Math.max(0, archives.length - at);
    },
  };
}

export interface PublishLoadSettings {
  /** Publishes in flight at once: each caller sends its next archive when the previous one is answered. */
  concurrency: number;
  durationSecs: number;
}

/** A publish that had no answer after this long counts as a timeout. */
const PUBLISH_TIMEOUT_MS = 10_000;

/** One `POST <url>/packages` of `archive`: its status and body (a `TimeoutError` after PUBLISH_TIMEOUT_MS). */
export async function publishArchive(url: string, archive: Buffer): Promise<{ status: number; text: string }> {
  const response = await fetch(`${url}/packages`, {
    method: 'POST',
    headers: { 'content-type': 'application/gzip' },
    body: archive,
    signal: AbortSignal.timeout(PUBLISH_TIMEOUT_MS),
  });
  return { status: response.status, text: await response.text() };
}

/**
 * `POST <url>/packages` of the pool's archives, `concurrency` callers at a time, until the
 * duration ends or the pool is empty (said on stderr: the run was shorter than asked). Only a
 * 201 counts as a publish; its latency runs from the request to the end of the answer's body.
 * Throughput is publishes over the wall time of the run.
 */
export async function runPublishLoad(
  url: string,
  pool: ArchivePool,
  settings: PublishLoadSettings,
): Promise<LoadResult> {
  const latencies: number[] = [];
  let errors = 0;
  let timeouts = 0;
  let non2xx = 0;
  const refusals: string[] = [];
  const started = performance.now();
  const deadline = started + settings.durationSecs * 1000;

  async function caller(): Promise<void> {
    for (;;) {
      if (performance.now() >= deadline) return;
      const archive = pool.next();
      if (archive === undefined) return;
      const sent = performance.now();
      try {
        const { status, text } = await publishArchive(url, archive);
        if (status === 201) latencies.push(performance.now() - sent);
        else {
          non2xx++;
          if (refusals.length === 0) refusals.push(`${status} ${text.slice(0, 300)}`);
        }
      } catch (error) {
        if ((error as Error).name === 'TimeoutError') timeouts++;
        else errors++;
      }
    }
  }

  await Promise.all(Array.from({ length: settings.concurrency }, () => caller()));
  const elapsedSecs = (performance.now() - started) / 1000;
  if (pool.remaining === 0 && elapsedSecs < settings.durationSecs)
    console.error(
      `  the archive pool ran out after ${elapsedSecs.toFixed(1)} s of the ${settings.durationSecs} s asked`,
    );
  if (refusals.length > 0) console.error(`  ${non2xx} publishes refused, the first: ${refusals[0]}`);
  return selfTimedResult(latencies, elapsedSecs, { errors, timeouts, non2xx });
}
