import type { MemoryEntry } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import type { AgentStore } from '../agents/agent-store.ts';
import { Errors } from '../errors/errors.ts';
import type { Clock } from '../time/clock.ts';

/** How an entry is stored: collection `memory`, id `<agent_id>:<key>`. */
export interface MemoryRecord extends MemoryEntry {
  id: string;
  agent_id: string;
  updated_at: string;
}

export const MEMORY_COLLECTION = 'memory';
/** Characters, not bytes; the router accepts path params of up to 256 characters. */
export const MEMORY_KEY_MAX = 256;

/**
 * Per-agent key-value memory (spec §Memory). Isolated by agent: every operation is scoped by the
 * agent id, which is part of the document id. Operations on an unknown agent are `NotFound`.
 */
export interface MemoryStore {
  /** Entries sorted by key. */
  list(agentId: string): Promise<MemoryEntry[]>;
  /** `NotFound` when the key is absent. */
  get(agentId: string, key: string): Promise<MemoryEntry>;
  /** Creates or overwrites. */
  put(agentId: string, key: string, value: string): Promise<MemoryEntry>;
  /** Idempotent: deleting an absent key succeeds (DELETE answers 204 either way). */
  delete(agentId: string, key: string): Promise<void>;
  /** Every entry of an agent, without the agent check (the agent is being uninstalled). */
  deleteAll(agentId: string): Promise<void>;
}

export function createMemoryStore(store: Store, agents: AgentStore, clock: Clock): MemoryStore {
  const memory = store.collection<MemoryRecord>(MEMORY_COLLECTION, { indexes: [{ field: 'agent_id' }] });
  const docId = (agentId: string, key: string): string => `${agentId}:${key}`;

  async function knownAgent(agentId: string): Promise<void> {
    if ((await agents.get(agentId)) === null) throw Errors.notFound('agent', agentId);
  }

  return {
    async list(agentId) {
      await knownAgent(agentId);
      const rows = await memory.find({ where: { agent_id: agentId }, orderBy: { field: 'key' } });
      return rows.map(({ doc }) => ({ key: doc.key, value: doc.value }));
    },
    async get(agentId, key) {
      validKey(key);
      await knownAgent(agentId);
      const found = await memory.get(docId(agentId, key));
      if (found === null) throw Errors.notFound('memory key', key);
      return { key, value: found.doc.value };
    },
    async put(agentId, key, value) {
      validKey(key);
      await knownAgent(agentId);
      const updated_at = clock.now().toISOString();
      await memory.upsert({ id: docId(agentId, key), agent_id: agentId, key, value, updated_at });
      return { key, value };
    },
    async delete(agentId, key) {
      validKey(key);
      await knownAgent(agentId);
      await memory.delete(docId(agentId, key));
    },
    async deleteAll(agentId) {
      for (const { doc } of await memory.find({ where: { agent_id: agentId } })) await memory.delete(doc.id);
    },
  };
}

/** Keys are 1-256 characters without control characters (docs/agents.md "Memory"). */
function validKey(key: string): void {
  const length = [...key].length;
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (length === 0 || length > MEMORY_KEY_MAX || /[\u0000-\u001f\u007f]/.test(key))
    throw Errors.validation(`memory key must be 1-${MEMORY_KEY_MAX} characters without control characters`, {
      key: key.slice(0, 80),
    });
}
