import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { LOST_REASON, type Job } from '@agent-platform/queue';
import type { ChildQueueSpec, QueueHarness } from './queue-harness.ts';
import { waitUntil } from './wait-until.ts';

const FIXTURE = fileURLToPath(new URL('./queue-dying-worker.fixture.ts', import.meta.url));
/** Short, so a lost run is noticed quickly; long enough for a loaded machine to renew in time. */
const LEASE_MS = 1_500;

/**
 * Starts the dying-worker fixture on `queue`, waits until it has started a job (resolving to that
 * run's attempt), then SIGKILLs it: a run lost with its process.
 */
async function runAndKill(spec: ChildQueueSpec, queue: string): Promise<number> {
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, JSON.stringify(spec), queue], {
    cwd: fileURLToPath(new URL('.', import.meta.url)),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await waitUntil(() => /started \d+/.test(stdout) || child.exitCode !== null, {
      timeoutMs: 30_000,
      intervalMs: 10,
      message: `the dying worker to start a job (stderr: ${stderr})`,
    });
    const started = /started (\d+)/.exec(stdout);
    if (started === null) throw new Error(`the dying worker exited first: ${stderr}`);
    return Number(started[1]);
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
}

/** Lost-run cases of the queue conformance suite: workers SIGKILLed in the middle of a job. */
export function queueLostRunCases(h: QueueHarness): void {
  it('counts a run lost with its SIGKILLed process as an attempt; losing the last one fails the job and calls onLost, not the handler', async ({ skip }) => {
    if (!h.hasLeased) return skip('the adapter cannot open a queue with a short lease');
    const { queue, child } = await h.leased(LEASE_MS);
    const q = h.name('lost');
    await queue.add(q, { n: 1 }, { jobId: 'delivery-1', attempts: 2, backoffMs: 10 });

    expect(await runAndKill(child, q)).toBe(1);
    expect(await runAndKill(child, q)).toBe(2);

    const handled: unknown[] = [];
    const lost: { job: Job<unknown>; reason: string }[] = [];
    await queue.process(q, async (job) => void handled.push(job.data), {
      onLost: async (job, reason) => void lost.push({ job, reason }),
    });
    await waitUntil(() => lost.length === 1, { timeoutMs: 20_000, message: 'onLost for the job whose last attempt was lost' });
    expect(lost[0]).toMatchObject({ job: { id: 'delivery-1', queue: q, data: { n: 1 }, attempt: 2 }, reason: LOST_REASON });
    // Failed for good: its id is free again, and the handler never ran it.
    await queue.add(q, 'marker');
    await waitUntil(() => handled.length === 1, { message: 'the marker job' });
    expect(handled).toEqual(['marker']);
    expect(await queue.add(q, { n: 2 }, { jobId: 'delivery-1' })).toEqual({ id: 'delivery-1', duplicate: false });
    await waitUntil(() => handled.length === 2, { message: 'the re-added job' });
    expect(lost).toHaveLength(1);
  }, 120_000);

  it('hands a scheduler slot whose only run was lost to onLost, with its slot', async ({ skip }) => {
    if (!h.hasLeased) return skip('the adapter cannot open a queue with a short lease');
    const { queue, child } = await h.leased(LEASE_MS);
    const q = h.name('lost-slot');
    const at = new Date(Date.now() + 200).toISOString();
    await queue.upsertScheduler(q, 'remind', { kind: 'at', at }, 'slot');

    expect(await runAndKill(child, q)).toBe(1);

    const handled: Job<unknown>[] = [];
    const lost: Job<unknown>[] = [];
    await queue.process(q, async (job) => void handled.push(job), { onLost: async (job) => void lost.push(job) });
    await waitUntil(() => lost.length === 1, { timeoutMs: 20_000, message: 'onLost for the lost slot' });
    expect(lost[0]).toMatchObject({ id: `remind:${at}`, slot_at: at, scheduler_id: 'remind', data: 'slot', attempt: 1 });
    expect(handled).toEqual([]);
  }, 120_000);
}
