import type { Store } from '@agent-platform/store';
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
 * Contents this process wrote or read, by id, newest use last, up to `maxBytes` of text in all. A
 * content never changes once written, so an entry never goes stale: the next model call of an
 * agent whose last turns this process wrote reads none of them again.
 */
export class SessionContentCache {
  private readonly texts = new Map<string, string>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get(id: string): string | undefined {
    const text = this.texts.get(id);
    if (text !== undefined) {
      this.texts.delete(id);
      this.texts.set(id, text);
    }
    return text;
  }

  put(id: string, text: string, bytes: number): void {
    if (bytes > this.maxBytes || this.texts.has(id)) return;
    this.texts.set(id, text);
    this.bytes += bytes;
    for (const [oldest, old] of this.texts) {
      if (this.bytes <= this.maxBytes) break;
      this.texts.delete(oldest);
      this.bytes -= Buffer.byteLength(old, 'utf8');
    }
  }

  forget(id: string): void {
    const text = this.texts.get(id);
    if (text === undefined) return;
    this.texts.delete(id);
    this.bytes -= Buffer.byteLength(text, 'utf8');
  }
}
