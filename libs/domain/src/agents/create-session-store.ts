import { StoreConflictError, type Store } from '@agent-platform/store';
import { Errors } from '../errors/errors.ts';
import { noFaults, type FaultPoints } from '../faults/fault-points.ts';
import type { Clock } from '../time/clock.ts';
import type { SessionStore, SessionTurn } from './session-store.ts';
import { windowStart } from './session-window.ts';
import { contentRefs, storedBytes, TurnContents, type StoredTurn } from './session-contents.ts';

/**
 * The canonical cross-channel session of one agent (collection `sessions`, id = agent id): its
 * turns oldest first, a long one as a reference to its content (session-contents.ts). A document
 * written before contents were kept apart holds only inline turns, and reads the same.
 */
export interface SessionRecord {
  id: string;
  agent_id: string;
  turns: StoredTurn[];
  updated_at: string;
}

/**
 * A per-channel transcript (collection `session_transcripts`): one per (agent, channel id,
 * conversation), written by the channel router (transcript-store.ts, docs/channels.md).
 */
export interface TranscriptRecord {
  id: string;
  agent_id: string;
  /** The channel id. */
  channel: string;
  conversation?: string;
  /** Oldest first; a long one as a reference to its content (session-contents.ts, `transcript` set). */
  turns: StoredTurn[];
  /** The inbound messages (envelope ids) already appended, newest last: a redelivery appends nothing. */
  message_ids?: string[];
  updated_at: string;
  /** Time of the oldest turn kept (indexed: retention reads transcripts oldest first, docs/retention.md); absent on older records. */
  oldest_turn_at?: string;
}

export const SESSIONS_COLLECTION = 'sessions';
export const TRANSCRIPTS_COLLECTION = 'session_transcripts';

export function transcriptsCollection(store: Store) {
  return store.collection<TranscriptRecord>(TRANSCRIPTS_COLLECTION, { indexes: [{ field: 'agent_id' }, { field: 'oldest_turn_at' }] });
}

/**
 * Sessions in the shared store, so that every api node and worker sees the same context. An
 * append is one `update` of the session document (an atomic read-modify-write of the store), so
 * two invocations finishing together both keep their turns. A long turn's content is inserted
 * as its own document in the same turn of the event loop as that update (the embedded store
 * commits them in one transaction), and the session document keeps a reference: an append then
 * rewrites the short turns and the references, not the conversation (docs/agents.md "Sessions";
 * docs/performance.md "A long session").
 */
export function createSessionStore(store: Store, clock: Clock, faults: FaultPoints = noFaults): SessionStore {
  const sessions = store.collection<SessionRecord>(SESSIONS_COLLECTION);
  const transcripts = transcriptsCollection(store);
  const contents = new TurnContents(store);

  async function append(agentId: string, turns: SessionTurn[], maxTurns: number, maxBytes = Infinity): Promise<void> {
    const updatedAt = clock.now().toISOString();
    const { stored, written, ids } = contents.split(agentId, turns);
    // The contents the window drops, as decided by the call of `change` whose result was stored.
    let dropped: string[] = [];
    written.push(
      sessions.update(agentId, (current) => {
        const all = [...(current?.doc.turns ?? []), ...stored];
        const from = windowStart(all, maxTurns, maxBytes, storedBytes);
        dropped = contentRefs(all.slice(0, from));
        return { id: agentId, agent_id: agentId, turns: all.slice(from), updated_at: updatedAt };
      }),
    );
    faults.reach('session.submitted');
    try {
      await Promise.all(written);
    } catch (error) {
      // Contents inserted for an append that did not happen: nothing refers to them.
      void contents.forget(ids);
      if (!(error instanceof StoreConflictError)) throw error;
      throw Errors.conflict(`the session of agent '${agentId}' is being written concurrently; try again`, {
        agent_id: agentId,
      });
    }
    faults.reach('session.appended');
    // Deleted after the session stopped referring to them, and not waited for: the request's
    // commit is not held up by them. One left by a crash here is removed with the session
    // (`reset`, `deleteAll`).
    void contents.forget(dropped);
  }

  /** Deletes the agent's session document and every content of it, referred to or not. */
  async function clear(agentId: string): Promise<void> {
    await sessions.delete(agentId);
    await contents.clear(agentId, null);
  }

  return {
    append,
    async history(agentId, maxBytes) {
      const turns = (await sessions.get(agentId))?.doc.turns ?? [];
      return contents.resolve(maxBytes === undefined ? turns : turns.slice(windowStart(turns, turns.length, maxBytes, storedBytes)));
    },
    reset: clear,
    async deleteAll(agentId) {
      await clear(agentId);
      for (const { doc } of await transcripts.find({ where: { agent_id: agentId } })) {
        await transcripts.delete(doc.id);
        await contents.clear(agentId, doc.id);
      }
    },
    async state(agentId) {
      const turns = (await sessions.get(agentId))?.doc.turns ?? [];
      return turns.length > 0 ? 'active' : 'empty';
    },
  };
}
