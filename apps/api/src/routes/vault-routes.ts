import {
  ErrorEnvelope,
  VaultEntryList,
  VaultEntryView,
  VaultKeyParams,
  VaultPutBody,
} from '@agent-platform/contracts';
import { Errors } from '@agent-platform/domain';
import { Type } from 'typebox';
import type { RoutePlugin } from '../api-app.ts';

/**
 * GET /vault, PUT /vault/{key}, DELETE /vault/{key}. There is no GET /vault/{key}: values are
 * write-only over HTTP (spec). The pipeline audits PUT and DELETE under category `vault` with
 * the path (so the key name) and never the body; its request log carries no body either.
 */
const TAGS = ['vault'];

export const vaultRoutes: RoutePlugin = (app, deps) => {
  app.get(
    '/vault',
    {
      config: { action: 'VaultRead' },
      schema: {
        tags: TAGS,
        summary: 'Stored key names and times (never values)',
        response: { 200: VaultEntryList },
      },
    },
    async () => deps.vault.list(),
  );

  app.put(
    '/vault/:key',
    {
      config: { action: 'VaultManage', audit: 'vault' },
      schema: {
        tags: TAGS,
        summary: 'Store or rotate a secret',
        params: VaultKeyParams,
        body: VaultPutBody,
        response: { 200: VaultEntryView, 400: ErrorEnvelope },
      },
    },
    async (request) => deps.vault.put(request.params.key, request.body.value),
  );

  app.delete(
    '/vault/:key',
    {
      config: { action: 'VaultManage', audit: 'vault' },
      schema: {
        tags: TAGS,
        summary: 'Delete a secret',
        params: VaultKeyParams,
        response: { 204: Type.Null({ description: 'Deleted.' }), 400: ErrorEnvelope, 404: ErrorEnvelope },
      },
    },
    async (request, reply) => {
      if (!(await deps.vault.delete(request.params.key)))
        throw Errors.notFound('vault key', request.params.key);
      return reply.code(204).send(null);
    },
  );
};
