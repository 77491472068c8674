import { StoreConflictError, type Store } from '@agent-platform/store';
import { Errors } from '../errors/errors.ts';
import type { Clock } from '../time/clock.ts';
import type { SessionStore, SessionTurn } from './session-store.ts';
import { newestTurnsWithin } from './session-window.ts';

/** The canonical cross-channel session of one agent (collection `sessions`, id = agent id). */
export interface SessionRecord {
  id: string;
  agent_id: string;
  turns: SessionTurn[];
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
  turns: SessionTurn[];
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
 * append is one `update` (an atomic read-modify-write of the store), so two invocations
 * finishing together both keep their turns.
 */
export function createSessionStore(store: Store, clock: Clock): SessionStore {
  const sessions = store.collection<SessionRecord>(SESSIONS_COLLECTION);
  const transcripts = transcriptsCollection(store);

  async function append(agentId: string, turns: SessionTurn[], maxTurns: number, maxBytes = Infinity): Promise<void> {
    const updatedAt = clock.now().toISOString();
    try {
      await sessions.update(agentId, (current) => ({
        id: agentId,
        agent_id: agentId,
        turns: newestTurnsWithin([...(current?.doc.turns ?? []), ...turns], maxTurns, maxBytes),
        updated_at: updatedAt,
      }));
    } catch (error) {
      if (!(error instanceof StoreConflictError)) throw error;
      throw Errors.conflict(`the session of agent '${agentId}' is being written concurrently; try again`, {
        agent_id: agentId,
      });
    }
  }

  return {
    append,
    async history(agentId, maxBytes) {
      const turns = (await sessions.get(agentId))?.doc.turns ?? [];
      return maxBytes === undefined ? turns : newestTurnsWithin(turns, turns.length, maxBytes);
    },
    async reset(agentId) {
      await sessions.delete(agentId);
    },
    async deleteAll(agentId) {
      await sessions.delete(agentId);
      for (const { doc } of await transcripts.find({ where: { agent_id: agentId } }))
        await transcripts.delete(doc.id);
    },
    async state(agentId) {
      const turns = (await sessions.get(agentId))?.doc.turns ?? [];
      return turns.length > 0 ? 'active' : 'empty';
    },
  };
}
