/**
 * Child-process half of the queue conformance's lost-run cases (queue-conformance-lost.ts): opens
 * the queue described by its first argument (JSON `ChildQueueSpec`), takes jobs of the queue named
 * by the second, prints `started <attempt>` for each and never finishes them: the test SIGKILLs it.
 *
 * Usage: node --import tsx queue-dying-worker.fixture.ts '<spec json>' <queue>
 */
import type { Queue } from '@agent-platform/queue';
import type { ChildQueueSpec } from './queue-harness.ts';

const [specJson, name] = process.argv.slice(2);
if (specJson === undefined || name === undefined) throw new Error("usage: queue-dying-worker.fixture.ts '<spec>' <queue>");
const spec = JSON.parse(specJson) as ChildQueueSpec;

async function open(): Promise<Queue> {
  if (spec.kind === 'embedded') {
    const { openEmbeddedQueue } = await import('@agent-platform/queue/embedded');
    return openEmbeddedQueue({ path: spec.path, leaseMs: spec.leaseMs, pollIntervalMs: 50 });
  }
  const { connectBullmqQueue } = await import('@agent-platform/queue/bullmq');
  return connectBullmqQueue({ redisUrl: spec.redisUrl, prefix: spec.prefix, lockMs: spec.leaseMs });
}

const queue = await open();
await queue.process(name, (job) => {
  process.stdout.write(`started ${job.attempt}\n`);
  return new Promise<void>(() => undefined);
});
process.stdout.write('ready\n');
// The adapters' poll timers are unref'd (they never keep a platform process alive): without this
// the fixture could exit while it waits for a lease to lapse, before it ever takes the job.
setInterval(() => undefined, 60_000);
