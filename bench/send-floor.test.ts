import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { CHAIN_ANCHOR, chainHash, type ChainFields } from '@agent-platform/domain';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { startNatsServer, type NatsServerHandle } from '@agent-platform/testkit';
import { startNodeProcess, type NodeProcess } from './node-process.ts';
import { sendRequest } from './platform-setup.ts';
import { FLOOR_AGENT_ID, FLOOR_API_KEY } from './servers/send-floor-identity.ts';

const SERVER = fileURLToPath(new URL('./servers/send-floor.ts', import.meta.url));
const FLEET_API = fileURLToPath(new URL('./servers/send-floor-fleet-api.ts', import.meta.url));
const FLEET_WORKER = fileURLToPath(new URL('./servers/send-floor-fleet-worker.ts', import.meta.url));

type Entry = ChainFields & { hash: string };

/** Each entry names the one before it and carries the platform's chain hash over it, in order. */
function expectChained(entries: Entry[]): void {
  let prev = CHAIN_ANCHOR;
  entries.forEach(({ hash, ...fields }, i) => {
    expect(fields.seq).toBe(i + 1);
    expect(fields.prev_hash).toBe(prev);
    expect(hash).toBe(chainHash(fields));
    prev = hash;
  });
}

describe('the send floor (bench/servers/send-floor.ts)', () => {
  let dir = '';
  let server: NodeProcess | null = null;
  let others: NodeProcess[] = [];
  let nats: NatsServerHandle | null = null;

  afterEach(async () => {
    await server?.stop();
    server = null;
    await Promise.all(others.map((p) => p.stop()));
    others = [];
    await nats?.dispose();
    nats = null;
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  /** Starts the floor in `journal` mode, sends three messages and a bad one of each kind, stops it. */
  async function runSends(journal: 'file' | 'sqlite' | 'store'): Promise<void> {
    dir = await mkdtemp(join(tmpdir(), `ap-floor-test-${journal}-`));
    server = startNodeProcess({ entry: SERVER, cwd: dir, logFile: join(dir, 'output.log'), env: { FLOOR_JOURNAL: journal, FLOOR_DATA_DIR: dir } });
    const url = await server.listening();
    const send = sendRequest(FLOOR_AGENT_ID, FLOOR_API_KEY);
    for (const message of ['one', 'two', 'three']) {
      const res = await fetch(`${url}${send.path}`, { method: 'POST', headers: send.headers, body: JSON.stringify({ message }) });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { reply: string }).reply).toBe(message);
    }
    const badKey = await fetch(`${url}${send.path}`, { method: 'POST', headers: { ...send.headers, authorization: 'Bearer nope' }, body: send.body });
    expect(badKey.status).toBe(401);
    const badBody = await fetch(`${url}${send.path}`, { method: 'POST', headers: send.headers, body: JSON.stringify({ text: 'x' }) });
    expect(badBody.status).toBe(400);
    await server.stop();
    server = null;
  }

  it('file: one record per answered send, with both audit entries chained in order', async () => {
    await runSends('file');
    const records = (await readFile(join(dir, 'journal.log'), 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { session: { turn: Array<{ content: string }> }; audit: Entry[] });
    expect(records.map((r) => r.session.turn[0]?.content)).toEqual(['one', 'two', 'three']);
    expectChained(records.flatMap((r) => r.audit));
    expect(records.flatMap((r) => r.audit.map((e) => e.action))).toEqual(Array(3).fill(['gateway.routing', 'POST /agents/:id/send']).flat());
  });

  /** The records of a floor's SQLite journal, in order. */
  function sqliteRecords(file: string): Array<{ session: { turn: Array<{ content: string }> }; audit: Entry[] }> {
    const Database = createRequire(import.meta.url)('better-sqlite3') as new (path: string) => { prepare(sql: string): { all(): Array<{ body: string }> }; close(): void };
    const db = new Database(file);
    const rows = db.prepare('SELECT body FROM journal ORDER BY seq').all();
    db.close();
    return rows.map((row) => JSON.parse(row.body) as { session: { turn: Array<{ content: string }> }; audit: Entry[] });
  }

  it('sqlite: the same record as one row per send', async () => {
    await runSends('sqlite');
    const records = sqliteRecords(join(dir, 'journal.sqlite'));
    expect(records.map((r) => r.session.turn[0]?.content)).toEqual(['one', 'two', 'three']);
    expectChained(records.flatMap((r) => r.audit));
  });

  it("store: the platform's ten writes per send in the embedded store", async () => {
    await runSends('store');
    const store = await openEmbeddedStore({ path: join(dir, 'store.sqlite') });
    try {
      const audit = await store.log<Entry>('audit').scan(1, 100);
      expect(audit).toHaveLength(6);
      expectChained(audit);
      expect(await store.log('usage_events').count()).toBe(3);
      const traffic = await store.collection<{ id: string; outcome: string; expires_at: string }>('gateway_traffic', { ttlField: 'expires_at' }).find();
      expect(traffic.map((t) => t.doc.outcome)).toEqual(['ok', 'ok', 'ok']);
      const session = await store.collection<{ id: string; turns: Array<{ content: string }> }>('sessions').get(FLOOR_AGENT_ID);
      expect(session?.doc.turns.map((t) => t.content)).toEqual(['one', 'one', 'two', 'two', 'three', 'three']);
      expect(await store.counters.get(`stats:${FLOOR_AGENT_ID}:received`)).toBe(3);
    } finally {
      await store.close();
    }
  });

  it('fleet: an api node asks a worker over NATS; the worker keeps the record and the api answers with its reply', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ap-floor-test-fleet-'));
    nats = await startNatsServer({ jetstream: false });
    const env = { FLOOR_DATA_DIR: dir, FLOOR_NATS_URL: nats.url };
    const worker = startNodeProcess({ entry: FLEET_WORKER, cwd: dir, logFile: join(dir, 'worker.log'), env: { ...env, FLOOR_JOURNAL: 'sqlite' } });
    others.push(worker);
    await worker.waitFor(/send-floor-worker listening/);
    server = startNodeProcess({ entry: FLEET_API, cwd: dir, logFile: join(dir, 'api.log'), env });
    const url = await server.listening();
    const send = sendRequest(FLOOR_AGENT_ID, FLOOR_API_KEY);
    const res = await fetch(`${url}${send.path}`, { method: 'POST', headers: send.headers, body: JSON.stringify({ message: 'over the bus' }) });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { reply: string }).reply).toBe('over the bus');
    await worker.stop();
    others = [];
    const records = sqliteRecords(join(dir, 'journal.sqlite'));
    expect(records.map((r) => r.session.turn[0]?.content)).toEqual(['over the bus']);
    expectChained(records.flatMap((r) => r.audit));
  });
});
