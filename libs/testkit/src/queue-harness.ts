import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach } from 'vitest';
import type { Job, Queue } from '@agent-platform/queue';

/** What an adapter factory hands the queue conformance suite, once per test. */
export interface QueueUnderTest {
  queue: Queue;
  /**
   * Opens another queue on the same data (same SQLite file, same Redis): a second process, or
   * the first one restarted once `queue` is closed. May be called several times. Without it the
   * multi-instance and durability cases are skipped.
   */
  second?: () => Promise<Queue>;
  /**
   * For the lost-run cases: a queue on the same data whose claims lapse `leaseMs` after their
   * last renewal, and how a child process opens the same (the cases SIGKILL such a child in the
   * middle of a job). Without it those cases are skipped.
   */
  leased?: (leaseMs: number) => { open: () => Promise<Queue>; child: ChildQueueSpec };
  /**
   * Removes what the factory created; runs after the suite closed every queue it was given (a
   * queue a test already closed is closed again: `close()` must be idempotent).
   */
  cleanup: () => Promise<void>;
}

export type QueueFactory = () => Promise<QueueUnderTest>;

/** How the dying-worker fixture (queue-dying-worker.fixture.ts) opens the queue under test. */
export type ChildQueueSpec =
  | { kind: 'embedded'; path: string; leaseMs: number }
  | { kind: 'bullmq'; redisUrl: string; prefix: string; leaseMs: number };

export interface QueueHarness {
  readonly queue: Queue;
  readonly hasSecond: boolean;
  second(): Promise<Queue>;
  readonly hasLeased: boolean;
  /** A queue with a short lease (closed after the test) and the spec a child opens it by. */
  leased(leaseMs: number): Promise<{ queue: Queue; child: ChildQueueSpec }>;
  /** A queue or scheduler name unique to this test, so tests sharing one backend never meet. */
  name(suffix: string): string;
}

/** Registers the per-test factory call and teardown; returns the current test's harness. */
export function useQueueHarness(factory: QueueFactory): QueueHarness {
  let sut: QueueUnderTest | undefined;
  let opened: Queue[] = [];
  let prefix = '';

  beforeEach(async () => {
    sut = await factory();
    opened = [sut.queue];
    prefix = `conf-${randomUUID().slice(0, 8)}`;
  });

  afterEach(async () => {
    for (const queue of opened) await queue.close();
    await sut?.cleanup();
    sut = undefined;
  });

  return {
    get queue() {
      return sut!.queue;
    },
    get hasSecond() {
      return sut?.second !== undefined;
    },
    second: async () => {
      const queue = await sut!.second!();
      opened.push(queue);
      return queue;
    },
    get hasLeased() {
      return sut?.leased !== undefined;
    },
    leased: async (leaseMs) => {
      const { open, child } = sut!.leased!(leaseMs);
      const queue = await open();
      opened.push(queue);
      return { queue, child };
    },
    name: (suffix) => `${prefix}-${suffix}`,
  };
}

/** A handler that records every job it gets, in order of arrival. */
export function recorder<T>(): { jobs: (Job<T> & { at: number })[]; handler: (job: Job<T>) => Promise<void> } {
  const jobs: (Job<T> & { at: number })[] = [];
  return {
    jobs,
    handler: async (job) => {
      jobs.push({ ...job, at: Date.now() });
    },
  };
}
