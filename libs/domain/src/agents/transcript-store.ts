import { createHash } from 'node:crypto';
import type { Store } from '@agent-platform/store';
import { noFaults, type FaultPoints } from '../faults/fault-points.ts';
import type { Clock } from '../time/clock.ts';
import { transcriptsCollection } from './create-session-store.ts';
import { contentRefs, TurnContents } from './session-contents.ts';
import type { SessionTurn } from './session-store.ts';

/** Turns one transcript keeps; older ones are dropped (docs/channels.md "Transcripts"). */
export const TRANSCRIPT_MAX_TURNS = 500;
/** Inbound message ids remembered per transcript, so a redelivered message appends nothing. */
const REMEMBERED_IDS = 200;

export interface TranscriptSummary {
  channel_id: string;
  conversation: string;
  turns: number;
  last_at: string;
}

/**
 * Per-(channel, conversation) transcripts of an agent (spec §Agents: `session/reset` keeps them,
 * `DELETE /agents/{id}/history` removes them through SessionStore.deleteAll). Unlike the canonical
 * session, they are a record for people, not context for the model.
 */
export interface TranscriptStore {
  /** Appends the turns of one inbound message once: a second call with the same `messageId` does nothing. */
  append(
    key: { agent_id: string; channel_id: string; conversation: string },
    messageId: string,
    turns: SessionTurn[],
  ): Promise<void>;
  list(agentId: string): Promise<TranscriptSummary[]>;
  get(agentId: string, channelId: string, conversation: string): Promise<SessionTurn[] | null>;
}

/** The document id: a hash, since conversations are free text from the peer. */
function transcriptId(agentId: string, channelId: string, conversation: string): string {
  return `${agentId}:${createHash('sha256').update(`${channelId}\u0000${conversation}`).digest('hex').slice(0, 32)}`;
}

/**
 * A long turn's content is kept apart as in the canonical session (session-contents.ts, with
 * `transcript` set), so an inbound message rewrites the short turns and the references, not the
 * conversation (docs/channels.md "Transcripts").
 */
export function createTranscriptStore(store: Store, clock: Clock, faults: FaultPoints = noFaults): TranscriptStore {
  const transcripts = transcriptsCollection(store);
  const contents = new TurnContents(store);
  return {
    async append(key, messageId, turns) {
      const id = transcriptId(key.agent_id, key.channel_id, key.conversation);
      const at = clock.now().toISOString();
      const { stored, written, ids } = contents.split(key.agent_id, turns, id);
      // Decided by the call of `change` whose result was stored: the contents of a redelivered
      // message (nothing appended) and those the window drops.
      let unused: string[] = [];
      written.push(
        transcripts.update(id, (current) => {
          const seen = current?.doc.message_ids ?? [];
          if (seen.includes(messageId)) {
            unused = ids;
            return null;
          }
          const all = [...(current?.doc.turns ?? []), ...stored];
          const kept = all.slice(-TRANSCRIPT_MAX_TURNS);
          unused = contentRefs(all.slice(0, all.length - kept.length));
          return {
            id,
            agent_id: key.agent_id,
            channel: key.channel_id,
            conversation: key.conversation,
            turns: kept,
            message_ids: [...seen, messageId].slice(-REMEMBERED_IDS),
            updated_at: at,
            oldest_turn_at: kept[0]?.at ?? at,
          };
        }),
      );
      faults.reach('transcript.submitted');
      try {
        await Promise.all(written);
      } catch (error) {
        void contents.forget(ids);
        throw error;
      }
      faults.reach('transcript.appended');
      // Behind the message, as the session's: one left by a crash goes with the agent's history.
      void contents.forget(unused);
    },
    async list(agentId) {
      const rows = await transcripts.find({ where: { agent_id: agentId } });
      return rows
        .map(({ doc }) => ({
          channel_id: doc.channel,
          conversation: doc.conversation ?? '',
          turns: doc.turns.length,
          last_at: doc.updated_at,
        }))
        .sort((a, b) => b.last_at.localeCompare(a.last_at));
    },
    async get(agentId, channelId, conversation) {
      const found = await transcripts.get(transcriptId(agentId, channelId, conversation));
      return found === null ? null : contents.resolve(found.doc.turns);
    },
  };
}
