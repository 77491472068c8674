import {
  AgentIdParams,
  ErrorEnvelope,
  MemoryEntry,
  MemoryEntryList,
  MemoryKeyParams,
  MemoryPutBody,
} from '@agent-platform/contracts';
import { Type } from 'typebox';
import type { RoutePlugin } from '../api-app.ts';

/**
 * Spec §Endpoints "Memory": a per-agent key-value store of strings (docs/agents.md "Memory").
 * The path id is the only scope. An unknown agent is 404; a non-string value is 422 (the
 * pipeline's wrong-type rule); DELETE of an absent key is 204 like any other (idempotent).
 */
const TAGS = ['memory'];
const ids = { id: 'agent' };
const Errors404 = { 400: ErrorEnvelope, 404: ErrorEnvelope };

export const memoryRoutes: RoutePlugin = (app, deps) => {
  app.get(
    '/agents/:id/memory',
    {
      config: { action: 'MemoryRead', ids },
      schema: {
        tags: TAGS,
        summary: "The agent's entries, sorted by key",
        params: AgentIdParams,
        response: { 200: MemoryEntryList, ...Errors404 },
      },
    },
    async (request) => ({ entries: await deps.memory.list(request.params.id) }),
  );

  app.get(
    '/agents/:id/memory/:key',
    {
      config: { action: 'MemoryRead', ids },
      schema: {
        tags: TAGS,
        summary: 'One entry; 404 when the key is absent',
        params: MemoryKeyParams,
        response: { 200: MemoryEntry, ...Errors404 },
      },
    },
    async (request) => deps.memory.get(request.params.id, request.params.key),
  );

  app.put(
    '/agents/:id/memory/:key',
    {
      config: { action: 'MemoryWrite', ids, audit: 'agents' },
      schema: {
        tags: TAGS,
        summary: 'Create or overwrite an entry',
        params: MemoryKeyParams,
        body: MemoryPutBody,
        response: { 200: MemoryEntry, ...Errors404 },
      },
    },
    async (request) => deps.memory.put(request.params.id, request.params.key, request.body.value),
  );

  app.delete(
    '/agents/:id/memory/:key',
    {
      config: { action: 'MemoryWrite', ids, audit: 'agents' },
      schema: {
        tags: TAGS,
        summary: 'Delete an entry',
        params: MemoryKeyParams,
        response: { 204: Type.Null({ description: 'Deleted (or was absent).' }), ...Errors404 },
      },
    },
    async (request, reply) => {
      await deps.memory.delete(request.params.id, request.params.key);
      return reply.code(204).send(null);
    },
  );
};
