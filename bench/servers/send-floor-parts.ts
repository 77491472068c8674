import { createHash, randomUUID } from 'node:crypto';
import { closeSync, fdatasyncSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import Fastify from 'fastify';
import pino from 'pino';
import { Type } from 'typebox';
import { DEFAULT_PII_CATEGORIES } from '@agent-platform/contracts';
import { CHAIN_ANCHOR, chainHash, createGatewayTraffic, createSessionStore, usageEventsLog, type ChainFields, type SessionTurn } from '@agent-platform/domain';
import { createPiiDetector } from '@agent-platform/privacy';
import { FLOOR_AGENT_ID, FLOOR_API_KEY } from './send-floor-identity.ts';

/**
 * The pieces of the send floor (send-floor.ts, and its fleet: send-floor-fleet-api.ts and
 * send-floor-fleet-worker.ts): the HTTP front, the model turn, and the ways to make what a send
 * leaves behind durable. docs/performance.md "The floor of a send".
 */

const RATE_LIMIT_PER_MINUTE = 1_000_000_000;

interface Journal {
  append(records: string[]): void;
  close(): void;
}

function fileJournal(path: string): Journal {
  const fd = openSync(path, 'a');
  return {
    append(records) {
      writeSync(fd, records.join('\n') + '\n');
      fdatasyncSync(fd);
    },
    close: () => closeSync(fd),
  };
}

interface SqliteStatement {
  run(...params: unknown[]): unknown;
}
interface SqliteDb {
  pragma(sql: string): unknown;
  exec(sql: string): void;
  prepare(sql: string): SqliteStatement;
  close(): void;
}

async function sqliteJournal(path: string): Promise<Journal> {
  const { default: Database } = (await import('better-sqlite3')) as unknown as { default: new (path: string) => SqliteDb };
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE IF NOT EXISTS journal (seq INTEGER PRIMARY KEY, body TEXT NOT NULL) STRICT');
  const begin = db.prepare('BEGIN IMMEDIATE');
  const insert = db.prepare('INSERT INTO journal (body) VALUES (?)');
  const commit = db.prepare('COMMIT');
  return {
    append(records) {
      begin.run();
      for (const record of records) insert.run(record);
      commit.run();
    },
    close: () => db.close(),
  };
}

/** Records of one event-loop turn share a write and a sync; each caller learns when its own is durable. */
class GroupCommit {
  private records: string[] = [];
  private waiters: Array<{ resolve: () => void; reject: (error: unknown) => void }> = [];

  constructor(private readonly journal: Journal) {}

  submit(record: string): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.records.length === 0) setImmediate(() => this.commit());
      this.records.push(record);
      this.waiters.push({ resolve, reject });
    });
  }

  /** A failed write or sync fails every send of its batch (a 500 each), none is answered as kept. */
  private commit(): void {
    const { records, waiters } = this;
    this.records = [];
    this.waiters = [];
    try {
      this.journal.append(records);
    } catch (error) {
      for (const waiter of waiters) waiter.reject(error);
      return;
    }
    for (const waiter of waiters) waiter.resolve();
  }
}

/** `[agents] session_max_turns`' default. */
const SESSION_MAX_TURNS = 40;

/** What one send leaves behind, whatever the shape it is written in. */
interface SendFacts {
  invocation_id: string;
  at: string;
  agent_id: string;
  identity: string;
  session: { id: string; turn: SessionTurn[] };
  usage: { input_tokens: number; output_tokens: number };
  traffic: { provider: string; personal_data: boolean; forced_local: boolean };
}

interface Persistence {
  /** Resolves once what the send leaves behind is durable. */
  save(send: SendFacts): Promise<void>;
  close(): Promise<void>;
}

/** An audit entry's fields before its place in the chain (seq, prev_hash) and its hash. */
type AuditFields = Omit<ChainFields, 'seq' | 'prev_hash'>;
type ChainedEntry = ChainFields & { hash: string };

/** The entry at `seq` after the one whose hash is `prevHash`, hashed as the platform's audit trail does (audit-hash.ts). */
function chained(prevHash: string, seq: number, entry: AuditFields): ChainedEntry {
  const fields: ChainFields = { ...entry, seq, prev_hash: prevHash };
  return { ...fields, hash: chainHash(fields) };
}

/** The send's two audit entries: the gateway's routing decision, then the request's own. */
function auditEntries(send: SendFacts): AuditFields[] {
  const common = { timestamp: send.at, identity: send.identity, role: 'admin', target: send.agent_id, result: 'success' };
  return [
    { ...common, category: 'gateway', action: 'gateway.routing', metadata: { provider: send.traffic.provider, pii_detected: send.traffic.personal_data } },
    { ...common, category: 'agent', action: 'POST /agents/:id/send', metadata: null },
  ];
}

/** The redesign's shape: one record per send (session turn, usage, both audit entries, traffic) in a journal. */
function journalled(journal: Journal): Persistence {
  const commits = new GroupCommit(journal);
  let tip = { hash: CHAIN_ANCHOR, seq: 0 };
  return {
    save(send) {
      const audit = auditEntries(send).map((entry) => (tip = chained(tip.hash, tip.seq + 1, entry)));
      return commits.submit(JSON.stringify({ ...send, audit }));
    },
    close: async () => journal.close(),
  };
}

/**
 * The platform's write shape on the platform's embedded store (libs/store), everything else at
 * the floor, through the platform's own writers where it has them (gateway traffic, usage events,
 * the session): rate-limit window and received count, the traffic row and the routing entry before
 * the model; then the request's entry, the usage event, the traffic settle, usage totals, agent
 * stats and the session (docs/performance.md "Store operations per route": 10 writes, here in two
 * turns where the platform takes three).
 */
async function platformStore(dir: string): Promise<Persistence> {
  const { openEmbeddedStore } = await import('@agent-platform/store/embedded');
  const store = await openEmbeddedStore({ path: join(dir, 'store.sqlite'), durability: 'full' });
  const clock = { now: () => new Date() };
  const traffic = createGatewayTraffic(store, clock.now);
  const sessions = createSessionStore(store, clock);
  const usageEvents = usageEventsLog(store);
  const audit = store.log<ChainedEntry>('audit', { indexes: ['category', 'identity', 'timestamp'] });
  const append = (entry: AuditFields) => audit.append((tip) => chained(tip?.hash ?? CHAIN_ANCHOR, (tip?.seq ?? 0) + 1, entry));
  return {
    async save(send) {
      const [routing, request] = auditEntries(send);
      const minute = Math.floor(Date.parse(send.at) / 60_000);
      const id = randomUUID();
      await Promise.all([
        store.counters.add(`ratelimit:${send.agent_id}:${minute}`, 1),
        store.counters.add(`stats:${send.agent_id}:received`, 1),
        traffic.begin(
          {
            id,
            at: send.at,
            finished_at: null,
            correlation_id: send.invocation_id,
            agent_id: send.agent_id,
            identity: send.identity,
            requested_provider: send.traffic.provider,
            requested_model: 'echo',
            provider: send.traffic.provider,
            model: 'echo',
            pii_detected: send.traffic.personal_data,
            categories: {},
            count: 0,
            local_eligible: true,
            forced_local: send.traffic.forced_local,
            rerouted: false,
            tokenised: false,
            hydrated: false,
            restored: 0,
            outcome: 'pending',
          },
          24,
        ),
        append(routing!),
      ]);
      await Promise.all([
        append(request!),
        usageEvents.append(() => ({
          at: send.at,
          agent_id: send.agent_id,
          provider_id: send.traffic.provider,
          model: 'echo',
          ...send.usage,
          model_calls: 1,
          cost_usd: 0,
          workflow_type: null,
          value_class: null,
          source: 'Api',
        })),
        traffic.settle(id, { outcome: 'ok', finished_at: send.at }),
        store.counters.addMany([
          { key: `usage:${send.agent_id}:input_tokens`, delta: send.usage.input_tokens },
          { key: `usage:${send.agent_id}:output_tokens`, delta: send.usage.output_tokens },
        ]),
        store.counters.addMany([
          { key: `stats:${send.agent_id}:finished`, delta: 1 },
          { key: `stats:${send.agent_id}:ok`, delta: 1 },
        ]),
        sessions.append(send.agent_id, send.session.turn, SESSION_MAX_TURNS),
      ]);
    },
    close: () => store.close(),
  };
}

type Turn = SendFacts['session']['turn'][number];

/** What the HTTP front hands the rest of the send: who asked, for which agent, what. */
export interface SendAsked {
  agent_id: string;
  identity: string;
  message: string;
}

export interface SendAnswer {
  invocation_id: string;
  session_id: string;
  reply: string;
  usage: SendFacts['usage'];
}

/**
 * The model turn: the agent's canonical session is the model's context (up to
 * `session_max_turns`, 40), the privacy gateway's detectors look at the whole conversation (each
 * distinct text once, as the platform's token vault does), the `local` echo model answers, and
 * the send's facts are made durable before the answer is returned.
 */
export async function modelTurn(persistence: Persistence): Promise<(asked: SendAsked) => Promise<SendAnswer>> {
  const detector = await createPiiDetector({ categories: DEFAULT_PII_CATEGORIES, policyNumberPatterns: [], claimNumberPatterns: [] });
  const sessions = new Map<string, Turn[]>();
  return async ({ agent_id: agentId, identity, message }) => {
    const history = sessions.get(agentId) ?? [];
    const seen = new Map<string, number>();
    let personal = 0;
    for (const text of [...history.map((t) => t.content), message]) {
      let found = seen.get(text);
      if (found === undefined) seen.set(text, (found = detector.detect(text).length));
      personal += found;
    }
    const answer = message; // the `local` echo model
    const usage = { input_tokens: Math.ceil(message.length / 4), output_tokens: Math.ceil(answer.length / 4) };
    const at = new Date().toISOString();
    const invocationId = randomUUID();
    const turn: Turn[] = [
      { role: 'user', content: message, at },
      { role: 'assistant', content: answer, at },
    ];
    await persistence.save({
      invocation_id: invocationId,
      at,
      agent_id: agentId,
      identity,
      session: { id: agentId, turn },
      usage,
      traffic: { provider: 'local', personal_data: personal > 0, forced_local: false },
    });
    sessions.set(agentId, [...history, ...turn].slice(-SESSION_MAX_TURNS));
    return { invocation_id: invocationId, session_id: agentId, reply: answer, usage };
  };
}

const SendBody = Type.Object({ message: Type.String({ minLength: 1, maxLength: 262_144 }) }, { additionalProperties: false });
const Params = Type.Object({ id: Type.String({ format: 'uuid' }) });

/**
 * `POST /agents/{id}/send` as the floor answers it: the bearer key looked up by its SHA-256, the
 * path and body checked against schemas, the agent and its rate-limit window in memory, fastify's
 * request log at info to `<dir>/requests.log`; `send` does the rest. Listens on a free loopback
 * port, prints `<name> listening on <url>` and stops on SIGINT/SIGTERM after `onClose`.
 */
export async function serveSends(name: string, dir: string, send: (asked: SendAsked) => Promise<SendAnswer>, onClose: () => Promise<void>): Promise<void> {
  const keys = new Map([[createHash('sha256').update(FLOOR_API_KEY).digest('hex'), { id: 'key-1', role: 'admin' }]]);
  const agents = new Map([[FLOOR_AGENT_ID, { id: FLOOR_AGENT_ID, name: 'claims-intake', state: 'active', model: 'local' }]]);
  const windows = new Map<string, number>();
  const app = Fastify({ loggerInstance: pino({ level: 'info' }, pino.destination({ dest: join(dir, 'requests.log'), sync: false })) });
  app.post<{ Params: { id: string }; Body: { message: string } }>(
    '/agents/:id/send',
    { schema: { body: SendBody, params: Params } },
    async (request, reply) => {
      const bearer = /^Bearer\s+(\S+)\s*$/.exec(request.headers.authorization ?? '')?.[1];
      const key = bearer === undefined ? undefined : keys.get(createHash('sha256').update(bearer).digest('hex'));
      if (key === undefined) return reply.code(401).send({ error: { category: 'authentication', message: 'a valid API key is required' } });
      const agent = agents.get(request.params.id);
      if (agent === undefined) return reply.code(404).send({ error: { category: 'not_found', message: 'no such agent' } });
      const window = `${agent.id}:${Math.floor(Date.now() / 60_000)}`;
      const used = (windows.get(window) ?? 0) + 1;
      if (used > RATE_LIMIT_PER_MINUTE) return reply.code(429).send({ error: { category: 'rate_limited', message: 'slow down' } });
      windows.set(window, used);
      return send({ agent_id: agent.id, identity: key.id, message: request.body.message });
    },
  );
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  console.log(`${name} listening on ${address}`);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () =>
      void app
        .close()
        .then(onClose)
        .then(() => process.exit(0)),
    );
  }
}

/** `FLOOR_JOURNAL` (`file`, `sqlite` or `store`) in `dir`. */
export async function persistenceFor(mode: string, dir: string): Promise<Persistence> {
  if (mode === 'store') return platformStore(dir);
  return journalled(mode === 'sqlite' ? await sqliteJournal(join(dir, 'journal.sqlite')) : fileJournal(join(dir, 'journal.log')));
}
