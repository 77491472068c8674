import { ErrorEnvelope, RegistryVersion } from '@agent-platform/contracts';
import { Type } from 'typebox';
import type { RegistryApp } from '../registry-app.ts';
import { ARCHIVE_TYPES, installArchiveBody } from './archive-body.ts';
import { Forbidden } from './forbidden-schema.ts';
import type { RegistryRoutePlugin } from './registry-route.ts';
import { actorOf } from '../auth/registry-access.ts';

/** Fastify's own limit is a backstop only (fixed at boot); installArchiveBody applies the configured one. */
const BODY_LIMIT_BACKSTOP = 1024 * 1024 * 1024;

/**
 * `POST /packages` (docs/registry.md "Publish"): the raw D4 archive as the body. Access `publish`
 * (role publisher or registry-admin); ownership, immutability and validation are the package
 * service's. Registered in its own scope: the archive parser must not reach the JSON routes.
 */
export const publishRoute: RegistryRoutePlugin = async (app, deps) => {
  await app.register(async (scope) => {
    const publish = scope as RegistryApp;
    installArchiveBody(publish, () => deps.settings().max_archive_bytes);
    publish.post(
      '/packages',
      {
        bodyLimit: BODY_LIMIT_BACKSTOP,
        config: { registryAccess: 'publish' },
        schema: {
          tags: ['packages'],
          summary: 'Publish a version: the archive built by `agent-platform package build`',
          consumes: [...ARCHIVE_TYPES],
          body: Type.Unsafe<Buffer>({
            type: 'string',
            format: 'binary',
            description: 'The D4 archive (gzipped tar).',
          }),
          response: {
            201: RegistryVersion,
            400: ErrorEnvelope,
            403: Forbidden,
            409: ErrorEnvelope,
            413: ErrorEnvelope,
            415: ErrorEnvelope,
          },
        },
        // The body is bytes, not JSON: nothing to validate before the package service reads it.
        validatorCompiler: () => (value) => ({ value }),
      },
      async (request, reply) => {
        // An empty body never reaches the parser: say what was expected instead.
        const archive = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const version = await deps.packages.publish(archive, actorOf(request.registryCaller));
        return reply.code(201).send(version);
      },
    );
  });
};
