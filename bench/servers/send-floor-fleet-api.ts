import { connect } from '@nats-io/transport-node';
import { serveSends, type SendAnswer } from './send-floor-parts.ts';
import { FLOOR_SUBJECT } from './send-floor-identity.ts';

/**
 * The send floor's api node (docs/performance.md "The floor of a send"): the floor's HTTP front,
 * then one core NATS request to a floor worker (send-floor-fleet-worker.ts), whose answer it
 * returns. `FLOOR_NATS_URL` is the server; `FLOOR_DATA_DIR` holds the request log.
 */
const dir = process.env.FLOOR_DATA_DIR ?? process.cwd();
const nc = await connect({ servers: process.env.FLOOR_NATS_URL ?? 'nats://127.0.0.1:4222', noAsyncTraces: true });
await serveSends(
  'send-floor-api',
  dir,
  async (asked) => {
    const answer = (await nc.request(FLOOR_SUBJECT, JSON.stringify(asked), { timeout: 10_000 })).json<SendAnswer | { error: string }>();
    // A worker's failure is a 500 here, so the bench counts the run invalid instead of measuring it.
    if ('error' in answer) throw new Error(`the floor worker failed: ${answer.error}`);
    return answer;
  },
  () => nc.drain(),
);
