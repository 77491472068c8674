import { connect } from '@nats-io/transport-node';
import { modelTurn, persistenceFor, type SendAsked } from './send-floor-parts.ts';
import { FLOOR_SUBJECT } from './send-floor-identity.ts';

/**
 * The send floor's worker (docs/performance.md "The floor of a send"): takes the floor api nodes'
 * requests from a NATS queue group, runs the floor's model turn with the durable record in its own
 * `FLOOR_DATA_DIR` (`FLOOR_JOURNAL`, as send-floor.ts) and answers.
 */
const dir = process.env.FLOOR_DATA_DIR ?? process.cwd();
const persistence = await persistenceFor(process.env.FLOOR_JOURNAL ?? 'sqlite', dir);
const turn = await modelTurn(persistence);
const nc = await connect({ servers: process.env.FLOOR_NATS_URL ?? 'nats://127.0.0.1:4222', noAsyncTraces: true });
nc.subscribe(FLOOR_SUBJECT, {
  queue: 'floor-workers',
  callback: (error, msg) => {
    if (error !== null) return;
    turn(msg.json<SendAsked>()).then(
      (answer) => msg.respond(JSON.stringify(answer)),
      (err: unknown) => msg.respond(JSON.stringify({ error: String(err) })),
    );
  },
});
await nc.flush();
console.log('send-floor-worker listening on nats');
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () =>
    void nc
      .drain()
      .then(() => persistence.close())
      .then(() => process.exit(0)),
  );
}
