import { StoreConflictError, StoreDuplicateError, type Store } from '@agent-platform/store';
import { Errors } from '../errors/errors.ts';
import { AGENTS_COLLECTION, type AgentRecord } from './agent-record.ts';

/** Agents as stored (collection `agents`, unique `name`). Only the catalog creates or deletes them. */
export interface AgentStore {
  get(id: string): Promise<AgentRecord | null>;
  getByName(name: string): Promise<AgentRecord | null>;
  /** Every agent, sorted by name. */
  list(): Promise<AgentRecord[]>;
  /** `Duplicate` when the id or the name is taken. */
  insert(record: AgentRecord): Promise<AgentRecord>;
  /**
   * Read-modify-write with optimistic concurrency: `change` gets the current record and returns
   * the next one (or throws to refuse); it is called again if another writer got there first, so
   * it must not have side effects. `NotFound` for an unknown id.
   */
  update(id: string, change: (current: AgentRecord) => AgentRecord): Promise<AgentRecord>;
  /**
   * False when absent. `guard` sees the record about to be deleted and may throw to refuse; the
   * delete is version-checked, so a change between the guard and the delete (an activation
   * racing an uninstall) runs the guard again on the new record.
   */
  delete(id: string, guard?: (current: AgentRecord) => void): Promise<boolean>;
}

/** Writers racing on one agent (activate against suspend, upgrade) retry this often. */
const MAX_WRITE_ATTEMPTS = 20;

export function createAgentStore(store: Store): AgentStore {
  const agents = store.collection<AgentRecord>(AGENTS_COLLECTION, {
    indexes: [{ field: 'name', unique: true }],
    readMostly: true,
  });
  return {
    async get(id) {
      return (await agents.get(id))?.doc ?? null;
    },
    async getByName(name) {
      return (await agents.find({ where: { name }, limit: 1 }))[0]?.doc ?? null;
    },
    async list() {
      return (await agents.find({ orderBy: { field: 'name' } })).map(({ doc }) => doc);
    },
    async insert(record) {
      try {
        return (await agents.insert(record)).doc;
      } catch (error) {
        if (error instanceof StoreDuplicateError) throw Errors.duplicate('agent', record.name);
        throw error;
      }
    },
    async update(id, change) {
      for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
        const current = await agents.get(id);
        if (current === null) throw Errors.notFound('agent', id);
        const next = change(current.doc);
        try {
          return (await agents.replace({ ...next, id }, current.version)).doc;
        } catch (error) {
          if (!(error instanceof StoreConflictError)) throw error;
        }
      }
      throw Errors.conflict(`agent '${id}' is being changed concurrently; try again`, { id });
    },
    async delete(id, guard) {
      for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
        const current = await agents.get(id);
        if (current === null) return false;
        guard?.(current.doc);
        try {
          return await agents.delete(id, current.version);
        } catch (error) {
          if (!(error instanceof StoreConflictError)) throw error;
        }
      }
      throw Errors.conflict(`agent '${id}' is being changed concurrently; try again`, { id });
    },
  };
}
