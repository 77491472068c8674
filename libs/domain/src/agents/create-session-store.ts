import { StoreConflictError, StoreDuplicateError, type Store } from '@agent-platform/store';
import { Errors } from '../errors/errors.ts';
import type { Clock } from '../time/clock.ts';
import type { SessionStore, SessionTurn } from './session-store.ts';

/** The canonical cross-channel session of one agent (collection `sessions`, id = agent id). */
export interface SessionRecord {
  id: string;
  agent_id: string;
  turns: SessionTurn[];
  updated_at: string;
}

/** A per-channel transcript (collection `session_transcripts`); written once channels arrive. */
export interface TranscriptRecord {
  id: string;
  agent_id: string;
  channel: string;
  turns: SessionTurn[];
  updated_at: string;
}

export const SESSIONS_COLLECTION = 'sessions';
export const TRANSCRIPTS_COLLECTION = 'session_transcripts';

/** Appends racing on one session (two workers answering the same agent) retry this often. */
const MAX_WRITE_ATTEMPTS = 20;

/**
 * Sessions in the shared store, so that every api node and worker sees the same context. An
 * append is a read-modify-write with a version check, retried on a concurrent write, so two
 * invocations finishing together both keep their turns.
 */
export function createSessionStore(store: Store, clock: Clock): SessionStore {
  const sessions = store.collection<SessionRecord>(SESSIONS_COLLECTION);
  const transcripts = store.collection<TranscriptRecord>(TRANSCRIPTS_COLLECTION, {
    indexes: [{ field: 'agent_id' }],
  });

  async function append(agentId: string, turns: SessionTurn[], maxTurns: number): Promise<void> {
    const keep = Math.max(0, Math.floor(maxTurns));
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
      const current = await sessions.get(agentId);
      const all = [...(current?.doc.turns ?? []), ...turns];
      const next: SessionRecord = {
        id: agentId,
        agent_id: agentId,
        turns: keep === 0 ? [] : all.slice(-keep),
        updated_at: clock.now().toISOString(),
      };
      try {
        if (current === null) await sessions.insert(next);
        else await sessions.replace(next, current.version);
        return;
      } catch (error) {
        if (!(error instanceof StoreConflictError || error instanceof StoreDuplicateError)) throw error;
      }
    }
    throw Errors.conflict(`the session of agent '${agentId}' is being written concurrently; try again`, {
      agent_id: agentId,
    });
  }

  return {
    append,
    async history(agentId) {
      return (await sessions.get(agentId))?.doc.turns ?? [];
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
