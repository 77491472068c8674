import {
  BackupCreateBody,
  BackupList,
  BackupRestoreBody,
  BackupRestored,
  BackupView,
  ErrorEnvelope,
} from '@agent-platform/contracts';
import { can, Errors } from '@agent-platform/domain';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { ApiApp, RoutePlugin } from '../api-app.ts';

/**
 * Backups (spec §Endpoints "Health and daemon control"; docs/backup.md). Create and list work on
 * every api process of the embedded store; restore replaces the live store in this process, so it
 * is refused where other processes share the store (a fleet: bus = "nats"), which restore offline
 * with `agent-platform backup restore`. Every route answers 409 on MongoDB, whose backups are
 * MongoDB's own.
 */
const TAGS = ['backup'];
const Failures = { 400: ErrorEnvelope, 404: ErrorEnvelope, 409: ErrorEnvelope };
/** What POST /backup/upload accepts: the archive's bytes, as the registry's publish does. */
const ARCHIVE_TYPES = ['application/gzip', 'application/x-gzip', 'application/octet-stream'];

const FLEET_RESTORE =
  'restore over HTTP replaces the store under this process only, and other processes of this fleet share it (runtime.bus is not "embedded"): ' +
  'stop every process, run `agent-platform backup restore --data-dir <data_dir> <archive>`, then start them again (docs/backup.md "Restoring a fleet")';

function actorOf(request: FastifyRequest) {
  return { identity: request.caller.identity, role: request.caller.role };
}

export const backupRoutes: RoutePlugin = async (app, deps) => {
  app.post(
    '/backup/create',
    {
      config: { action: 'BackupCreate', audit: 'system' },
      schema: {
        tags: TAGS,
        summary: 'Archive the store under <data_dir>/backups while the platform serves',
        body: BackupCreateBody,
        response: { 200: BackupView, ...Failures },
      },
    },
    async (request) => deps.backups.create(request.body.scope, actorOf(request)),
  );

  app.get(
    '/backup/list',
    {
      config: { action: 'BackupList' },
      schema: {
        tags: TAGS,
        summary: 'The archives in <data_dir>/backups, newest first',
        response: { 200: BackupList },
      },
    },
    async () => ({ backups: await deps.backups.list() }),
  );

  app.post(
    '/backup/restore',
    {
      config: { action: 'BackupRestore', audit: 'system' },
      schema: {
        tags: TAGS,
        summary: 'Replace the state with a backup (by id, or an archive file on the host), atomically',
        body: BackupRestoreBody,
        response: { 200: BackupRestored, ...Failures },
      },
    },
    async (request) => {
      const { id, path, checksum, allow_foreign } = request.body;
      if ((id === undefined) === (path === undefined))
        throw Errors.validation(
          'send exactly one of id (a listed backup) or path (an archive file on the platform host)',
        );
      // An archive of another installation brings in what runs here: admin only (BackupRestoreForeign).
      if (allow_foreign === true && !can(request.caller.role, 'BackupRestoreForeign'))
        throw Errors.permissionDenied(
          `role ${request.caller.role} may not restore a foreign archive (allow_foreign: true needs BackupRestoreForeign, admin only; docs/backup.md "Foreign archives")`,
        );
      const { runtime } = deps.config.current();
      // On MongoDB the service answers with MongoDB's own procedure instead.
      if (runtime.store === 'embedded' && runtime.bus !== 'embedded') throw Errors.conflict(FLEET_RESTORE);
      const source = id !== undefined ? { kind: 'id' as const, id } : { kind: 'path' as const, path: path! };
      return deps.backups.restore(source, actorOf(request), {
        ...(checksum === undefined ? {} : { checksum }),
        ...(allow_foreign === undefined ? {} : { allowForeign: allow_foreign }),
      });
    },
  );

  // Its own scope: the body is the archive, streamed to disk (never parsed, never held in memory).
  await app.register(async (plain) => {
    const scope = plain as ApiApp;
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(ARCHIVE_TYPES, (_request, payload, done) => done(null, payload));
    scope.addContentTypeParser('*', (request, _payload, done) =>
      done(Errors.unsupportedMediaType(request.headers['content-type'] ?? '(none)', 'application/gzip')),
    );
    scope.post(
      '/backup/upload',
      {
        config: { action: 'BackupRestore', audit: 'system' },
        schema: {
          tags: TAGS,
          summary: 'Add an archive (the body, application/gzip) to <data_dir>/backups; restore it by its id',
          querystring: Type.Object(
            { checksum: Type.Optional(Type.String({ pattern: '^sha256:[0-9a-f]{64}$' })) },
            { additionalProperties: false },
          ),
          response: {
            201: BackupView,
            400: ErrorEnvelope,
            409: ErrorEnvelope,
            413: ErrorEnvelope,
            415: ErrorEnvelope,
          },
        },
      },
      async (request, reply) => {
        const body = request.body as NodeJS.ReadableStream | undefined;
        if (body === undefined || body === null)
          throw Errors.validation('the body must be the archive (Content-Type: application/gzip)');
        const view = await deps.backups.upload(body, request.query.checksum);
        return reply.code(201).send(view);
      },
    );
  });
};
