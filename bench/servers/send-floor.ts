import { modelTurn, persistenceFor, serveSends } from './send-floor-parts.ts';

/**
 * The floor of a send (docs/performance.md "The floor of a send"): not the platform, but the least
 * a send with the platform's guarantees has to do, to say what a redesign of the send path could
 * reach on a machine. Same HTTP shape as `POST /agents/{id}/send` (bearer key looked up by its
 * SHA-256, a JSON body checked against a schema, a JSON answer), fastify's request log at info to
 * a file, the rate-limit window in memory, the agent's canonical session (40 turns, the model's
 * context) in memory and run through the privacy gateway's detectors (each distinct text once, as
 * the platform's token vault does), the `local` echo model. What the send leaves behind is made
 * durable before the answer leaves, in one of three shapes (`FLOOR_JOURNAL`):
 * - `file` (default): ONE record per send holding what the platform writes as ten (the session
 *   turn, the usage, the traffic decision, the routing decision's and the request's audit entries,
 *   SHA-256 hash-chained in order), appended to a file: the records of one event-loop turn share
 *   one `write` and one `fdatasync`;
 * - `sqlite`: the same record as one row of one table of a WAL SQLite file, `synchronous = FULL`,
 *   one `BEGIN IMMEDIATE ... COMMIT` per event-loop turn;
 * - `store`: the platform's own write shape on the platform's embedded store (`libs/store`,
 *   `durability = "full"`): ten writes into the collections, logs and counters the platform uses.
 * `FLOOR_DATA_DIR` is where the files go (the process's working directory by default).
 */

const dir = process.env.FLOOR_DATA_DIR ?? process.cwd();
const persistence = await persistenceFor(process.env.FLOOR_JOURNAL ?? 'file', dir);
await serveSends('send-floor', dir, await modelTurn(persistence), () => persistence.close());
