import { randomUUID } from 'node:crypto';
import { SizedLru } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import { utf8Bytes } from './session-window.ts';
import type { SessionTurn } from './session-store.ts';

/**
 * A turn whose content is kept in a document of its own (collection `session_contents`): the
 * session document holds this reference instead of the text. A long turn is written once, when
 * it is appended, instead of with every later append to the session (docs/agents.md "Sessions").
 */
export interface SessionTurnRef {
  role: SessionTurn['role'];
  at: string;
  /** The id of the content's document. */
  content_ref: string;
  /** UTF-8 bytes of the content: what the session's byte window counts. */
  bytes: number;
}

/** A turn as the session document keeps it: inline (short), or a reference to its content. */
export type StoredTurn = SessionTurn | SessionTurnRef;

/** The content of one long turn (collection `session_contents`); never changed once written. */
export interface SessionContent {
  id: string;
  agent_id: string;
  content: string;
  at: string;
  /** The id of the per-channel transcript holding the turn; absent for the canonical session's. */
  transcript?: string;
}

export const SESSION_CONTENTS_COLLECTION = 'session_contents';

/**
 * A turn with at least this many UTF-8 bytes of content is kept apart. Below it the turn stays in
 * the session document, which every append rewrites: at most `session_max_turns` such turns, so
 * that rewrite stays under 80 KiB with the default 40 turns whatever `session_max_bytes` allows.
 */
export const SEPARATE_CONTENT_BYTES = 2048;

export function sessionContentsCollection(store: Store) {
  return store.collection<SessionContent>(SESSION_CONTENTS_COLLECTION, { indexes: [{ field: 'agent_id' }] });
}

export function isTurnRef(turn: StoredTurn): turn is SessionTurnRef {
  return 'content_ref' in turn;
}

/**
 * Text of long turns a process keeps in memory per store, by content id, newest use last. A content
 * never changes once written, so an entry never goes stale: the next model call of an agent whose
 * last turns this process wrote reads none of them again.
 */
const CONTENT_CACHE_BYTES = 32 * 1024 * 1024;

/**
 * One cache per store, shared by every TurnContents over it (the sessions and transcripts of the
 * api and the worker of an all-in-one): ids are unique and contents never change, so what one
 * wrote another may read, and the process holds at most one CONTENT_CACHE_BYTES.
 */
const caches = new WeakMap<Store, SizedLru<string, string>>();

function cacheOf(store: Store): SizedLru<string, string> {
  let cache = caches.get(store);
  if (cache === undefined) {
    cache = new SizedLru(CONTENT_CACHE_BYTES);
    caches.set(store, cache);
  }
  return cache;
}

/** Turns as a document keeps them, and the writes of the contents kept apart. */
export interface SplitTurns {
  stored: StoredTurn[];
  /** The inserts of the contents, submitted now: await them with the document's write. */
  written: Promise<unknown>[];
  /** Their ids, for `forget` if the document's write fails. */
  ids: string[];
}

/**
 * Long turns of the documents of one kind (the canonical sessions, or the per-channel
 * transcripts): split off when appended, put back when read, deleted when dropped.
 */
export class TurnContents {
  private readonly contents;
  private readonly cache;

  constructor(store: Store) {
    this.contents = sessionContentsCollection(store);
    this.cache = cacheOf(store);
  }

  /** Inserts the content of each long turn (`transcript` set on a transcript's) and returns the turns as stored. */
  split(agentId: string, turns: readonly SessionTurn[], transcript?: string): SplitTurns {
    const split: SplitTurns = { stored: [], written: [], ids: [] };
    for (const turn of turns) {
      const bytes = utf8Bytes(turn.content);
      if (bytes < SEPARATE_CONTENT_BYTES) {
        split.stored.push(turn);
        continue;
      }
      const id = randomUUID();
      const doc: SessionContent = { id, agent_id: agentId, content: turn.content, at: turn.at, ...(transcript === undefined ? {} : { transcript }) };
      split.ids.push(id);
      split.written.push(this.contents.insert(doc).then(() => this.cache.set(id, turn.content, bytes)));
      split.stored.push({ role: turn.role, at: turn.at, content_ref: id, bytes });
    }
    return split;
  }

  /** The turns with their contents; a turn whose content is gone (a write that failed half-way) is left out. */
  async resolve(turns: readonly StoredTurn[]): Promise<SessionTurn[]> {
    if (!turns.some(isTurnRef)) return turns as SessionTurn[];
    const resolved = await Promise.all(
      turns.map(async (turn): Promise<SessionTurn | null> => {
        if (!isTurnRef(turn)) return turn;
        const cached = this.cache.get(turn.content_ref);
        if (cached !== undefined) return { role: turn.role, content: cached, at: turn.at };
        const found = await this.contents.get(turn.content_ref);
        if (found === null) return null;
        this.cache.set(turn.content_ref, found.doc.content, turn.bytes);
        return { role: turn.role, content: found.doc.content, at: turn.at };
      }),
    );
    return resolved.filter((turn): turn is SessionTurn => turn !== null);
  }

  /** Deletes contents nothing refers to any more; failures are left for the next clear. */
  forget(ids: readonly string[]): Promise<void> {
    return Promise.all(
      ids.map((id) => {
        this.cache.delete(id);
        return this.contents.delete(id).catch(() => false);
      }),
    ).then(() => undefined);
  }

  /** Every content of the agent's canonical session (`transcript: null`) or of one transcript, referred to or not. */
  async clear(agentId: string, transcript: string | null): Promise<void> {
    const found = await this.contents.find({ where: { agent_id: agentId, transcript } });
    await this.forget(found.map(({ doc }) => doc.id));
  }
}

/** The ids of the contents `turns` refer to. */
export function contentRefs(turns: readonly StoredTurn[]): string[] {
  return turns.flatMap((turn) => (isTurnRef(turn) ? [turn.content_ref] : []));
}

/** UTF-8 bytes of a stored turn's content: what a byte window counts. */
export function storedBytes(turn: StoredTurn): number {
  return isTurnRef(turn) ? turn.bytes : utf8Bytes(turn.content);
}
