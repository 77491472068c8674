import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { StoreOperationCounter, type Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { openPostgresStore } from '@agent-platform/store/postgres';
import { requireBinary, suitePostgres } from '@agent-platform/testkit';
import { fixedClock } from '../time/clock.ts';
import { createSessionStore, SESSIONS_COLLECTION, TRANSCRIPTS_COLLECTION, type SessionRecord, type TranscriptRecord } from './create-session-store.ts';
import { createTranscriptStore, TRANSCRIPT_MAX_TURNS } from './transcript-store.ts';
import { SESSION_CONTENTS_COLLECTION, type SessionContent } from './session-contents.ts';
import type { SessionStore, SessionTurn } from './session-store.ts';

// Long turns kept apart from the session document (docs/agents.md "Sessions"), on the embedded
// store and on PostgreSQL, where the contents and the session document are separate statements
// and `update` is optimistic (it reads again and retries when another writer got there first).
const clock = fixedClock('2030-01-01T00:00:00.000Z');
const A = '11111111-1111-4111-8111-111111111111';
const B = '22222222-2222-4222-8222-222222222222';
const postgresMissing = requireBinary('initdb') === null || requireBinary('postgres') === null;

interface Opened {
  store: Store;
  /** Another store over the same data, as another process opens it (its own memory). */
  another(): Promise<Store>;
  close(): Promise<void>;
}

function longTurnCases(kind: string, open: () => Promise<Opened>): void {
  describe(`session store, long turns kept apart (${kind})`, () => {
    let opened: Opened;
    let store: Store;
    beforeEach(async () => {
      opened = await open();
      store = opened.store;
      sessions = createSessionStore(store, clock);
    });
    afterEach(async () => {
      await opened.close();
    });

    let sessions: SessionStore;
    const at = clock.now().toISOString();
    const long = (tag: string, kib = 3): SessionTurn => ({ role: 'user', content: `${tag}:${'x'.repeat(kib * 1024)}`, at });
    const short = (content: string): SessionTurn => ({ role: 'assistant', content, at });
    const sessionDoc = async () => (await store.collection<SessionRecord>(SESSIONS_COLLECTION).get(A))?.doc;
    const contents = () => store.collection<SessionContent>(SESSION_CONTENTS_COLLECTION);

    it('keeps a long turn as its own document and the session document small, and reads the conversation back in order', async () => {
      await sessions.append(A, [long('u1'), short('a1')], 40);
      await sessions.append(A, [short('u2'), long('a2')], 40);
      const doc = await sessionDoc();
      expect(JSON.stringify(doc).length).toBeLessThan(1024);
      expect(doc?.turns.map((t) => ('content_ref' in t ? `ref:${t.bytes}` : t.content))).toEqual([`ref:${3 * 1024 + 3}`, 'a1', 'u2', `ref:${3 * 1024 + 3}`]);
      expect(await contents().count({ agent_id: A })).toBe(2);
      const expected = [long('u1'), short('a1'), short('u2'), long('a2')];
      expect(await sessions.history(A)).toEqual(expected);
      // Another process (a second store over the same data, nothing in its memory) reads the same.
      expect(await createSessionStore(await opened.another(), clock).history(A)).toEqual(expected);
    });

    it('drops the oldest turns by count and bytes as before, and deletes the contents it dropped', async () => {
      for (let i = 1; i <= 5; i++) await sessions.append(A, [long(`u${i}`), short(`a${i}`)], 4);
      expect((await sessions.history(A)).map((t) => t.content.slice(0, 2))).toEqual(['u4', 'a4', 'u5', 'a5']);
      await vi.waitFor(async () => expect(await contents().count({ agent_id: A })).toBe(2));
      // The byte window counts a kept-apart turn at its full size: 7 KiB holds two 3 KiB turns and the short ones.
      await sessions.append(A, [long('u6'), short('a6')], 40, 7 * 1024);
      expect((await sessions.history(A)).map((t) => t.content.slice(0, 2))).toEqual(['a4', 'u5', 'a5', 'u6', 'a6']);
      expect((await sessions.history(A, 3 * 1024 + 6)).map((t) => t.content.slice(0, 2))).toEqual(['u6', 'a6']);
      await vi.waitFor(async () => expect((await contents().find({ where: { agent_id: A } })).map((c) => c.doc.content.slice(0, 2)).sort()).toEqual(['u5', 'u6']));
    });

    it('writes the contents and the session document in one turn, so the embedded store commits them together', async () => {
      const counter = new StoreOperationCounter();
      const counted = createSessionStore(counter.wrap(store), clock);
      const { tally } = await counter.measure(() => counted.append(A, [long('u'), long('a')], 40));
      const writes = tally.operations.filter((op) => op.kind === 'write');
      expect(writes.map((op) => op.name).sort()).toEqual(['session_contents.insert', 'session_contents.insert', 'sessions.update']);
      expect(new Set(writes.map((op) => op.batch)).size).toBe(1);
    });

    it('reads a session written before contents were kept apart, and leaves out a turn whose content is gone', async () => {
      await store.collection<SessionRecord>(SESSIONS_COLLECTION).insert({ id: A, agent_id: A, turns: [short('old1'), short('old2')], updated_at: at });
      await sessions.append(A, [long('u'), short('a')], 40);
      expect((await sessions.history(A)).map((t) => t.content.slice(0, 4))).toEqual(['old1', 'old2', 'u:xx', 'a']);
      const [content] = await contents().find({ where: { agent_id: A } });
      await contents().delete(content!.doc.id);
      expect((await createSessionStore(await opened.another(), clock).history(A)).map((t) => t.content)).toEqual(['old1', 'old2', 'a']);
    });

    it('reset and deleteAll delete every content of the agent, also one nothing refers to', async () => {
      await sessions.append(A, [long('u'), short('a')], 40);
      await sessions.append(B, [long('b')], 40);
      await contents().insert({ id: 'orphan', agent_id: A, content: 'left by a crash', at });
      await sessions.reset(A);
      expect(await sessions.state(A)).toBe('empty');
      await vi.waitFor(async () => expect(await contents().count({ agent_id: A })).toBe(0));
      await sessions.append(A, [long('u')], 40);
      await sessions.deleteAll(A);
      expect(await sessions.history(A)).toEqual([]);
      await vi.waitFor(async () => expect(await contents().count({ agent_id: A })).toBe(0));
      expect((await sessions.history(B)).map((t) => t.content.slice(0, 2))).toEqual(['b:']);
    });

    it('a channel transcript keeps long turns apart too: read back whole, a redelivery leaves nothing, its window deletes what it drops', async () => {
      const transcripts = createTranscriptStore(store, clock);
      const chat = { agent_id: A, channel_id: 'email-1', conversation: 'claim-77' };
      await transcripts.append(chat, 'm1', [long('u1'), short('a1')]);
      await transcripts.append(chat, 'm1', [long('u1-again'), short('a1')]);
      expect((await transcripts.get(A, 'email-1', 'claim-77'))?.map((t) => t.content.slice(0, 3))).toEqual(['u1:', 'a1']);
      await vi.waitFor(async () => expect(await contents().count({ agent_id: A })).toBe(1));
      const [doc] = await store.collection<TranscriptRecord>(TRANSCRIPTS_COLLECTION).find({ where: { agent_id: A } });
      expect(JSON.stringify(doc!.doc).length).toBeLessThan(1024);
      // The session's reset leaves the transcript's contents; DELETE .../history (deleteAll) removes them.
      await sessions.append(A, [long('s')], 40);
      await sessions.reset(A);
      expect((await transcripts.get(A, 'email-1', 'claim-77'))?.[0]?.content).toBe(long('u1').content);
      await sessions.deleteAll(A);
      expect(await transcripts.get(A, 'email-1', 'claim-77')).toBeNull();
      expect(await contents().count({ agent_id: A })).toBe(0);
      // The window: 500 turns; the long first turn dropped, its content deleted.
      await transcripts.append(chat, 'm2', [long('first')]);
      for (let i = 0; i < TRANSCRIPT_MAX_TURNS / 2; i++) await transcripts.append(chat, `n${i}`, [short(`q${i}`), short(`r${i}`)]);
      expect((await transcripts.get(A, 'email-1', 'claim-77'))?.[0]?.content).toBe('q0');
      await vi.waitFor(async () => expect(await contents().count({ agent_id: A })).toBe(0));
    });

    it('keeps every turn of concurrent appends of long turns', async () => {
      await Promise.all(Array.from({ length: 8 }, (_, i) => sessions.append(A, [long(`c${i}`)], 40)));
      expect((await sessions.history(A)).map((t) => t.content.slice(0, 2)).sort()).toEqual(['c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7']);
      expect(await contents().count({ agent_id: A })).toBe(8);
    });
  });
}

longTurnCases('embedded', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ap-session-turns-'));
  const path = join(dir, 'platform.db');
  const stores = [await openEmbeddedStore({ path })];
  return {
    store: stores[0]!,
    async another() {
      stores.push(await openEmbeddedStore({ path }));
      return stores.at(-1)!;
    },
    async close() {
      for (const store of stores) await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

describe.skipIf(postgresMissing)('on PostgreSQL', () => {
  const postgres = suitePostgres();
  let url: string;
  let schemas = 0;
  beforeAll(() => {
    url = postgres.url();
  });
  longTurnCases('postgres', async () => {
    schemas += 1;
    const schema = `sessions_${process.pid}_${schemas}`;
    const stores = [await openPostgresStore({ url, schema })];
    return {
      store: stores[0]!,
      async another() {
        stores.push(await openPostgresStore({ url, schema }));
        return stores.at(-1)!;
      },
      async close() {
        for (const store of stores) await store.close();
      },
    };
  });
});
