/** One turn of a conversation kept as context for the model. */
export interface SessionTurn {
  role: 'user' | 'assistant';
  content: string;
  at: string;
}

/**
 * Agent sessions (spec §Agents, §Resources "Session rows"). Each agent has one canonical
 * cross-channel session, which the model gets as context, plus per-channel transcripts (channels
 * arrive later). Stored in the shared store so every api node and worker sees the same session.
 */
export interface SessionStore {
  /**
   * Appends turns to the canonical session, dropping the oldest beyond `maxTurns` turns or
   * `maxBytes` UTF-8 bytes of content (`[agents] session_max_turns`, `session_max_bytes`), so the
   * document rewritten on every turn, and the context sent to the model, stay bounded.
   */
  append(agentId: string, turns: SessionTurn[], maxTurns: number, maxBytes?: number): Promise<void>;
  /**
   * The canonical session's turns, oldest first; with `maxBytes`, only the newest that fit (a
   * session written before the byte limit existed, or under a larger one, is cut on read).
   */
  history(agentId: string, maxBytes?: number): Promise<SessionTurn[]>;
  /** Clears the canonical session only (POST /agents/{id}/session/reset). */
  reset(agentId: string): Promise<void>;
  /** Deletes the canonical session and every per-channel transcript (DELETE /agents/{id}/history). */
  deleteAll(agentId: string): Promise<void>;
  /** Session state for the rows of GET /agents/{id}/session(s) and GET /sessions: `active` or `empty`. */
  state(agentId: string): Promise<'active' | 'empty'>;
}
