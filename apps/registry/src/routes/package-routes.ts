import {
  ErrorEnvelope,
  RegistryDownloads,
  RegistryHistory,
  RegistryPackage,
  RegistryPackageParams,
  RegistryVersion,
  RegistryVersionList,
  RegistryVersionParams,
} from '@agent-platform/contracts';
import { Type } from 'typebox';
import type { RegistryRoutePlugin } from './registry-route.ts';

/**
 * The package reads (docs/registry.md "Reading packages"): access `read` (anonymous unless
 * `read_requires_auth`), the download `download` (anonymous unless `download_requires_auth`).
 * Static segments (`versions`, `history`) win over `{version}` in the router.
 */
const TAGS = ['packages'];
const Failures = { 400: ErrorEnvelope, 404: ErrorEnvelope };

export const packageRoutes: RegistryRoutePlugin = (app, deps) => {
  app.get(
    '/packages/:name',
    {
      config: { registryAccess: 'read' },
      schema: {
        tags: TAGS,
        summary: 'A package: owners, latest version, every version',
        params: RegistryPackageParams,
        response: { 200: RegistryPackage, ...Failures },
      },
    },
    async (request) => deps.packages.getPackage(request.params.name),
  );

  app.get(
    '/packages/:name/versions',
    {
      config: { registryAccess: 'read' },
      schema: {
        tags: TAGS,
        summary: 'Every version, highest first, yanked ones included',
        params: RegistryPackageParams,
        response: { 200: RegistryVersionList, ...Failures },
      },
    },
    async (request) => deps.packages.listVersions(request.params.name),
  );

  app.get(
    '/packages/:name/history',
    {
      config: { registryAccess: 'read' },
      schema: {
        tags: TAGS,
        summary: 'Publishes, yanks, un-yanks and owner changes, oldest first',
        params: RegistryPackageParams,
        response: { 200: RegistryHistory, ...Failures },
      },
    },
    async (request) => deps.packages.history(request.params.name),
  );

  app.get(
    '/packages/:name/downloads',
    {
      config: { registryAccess: 'read' },
      schema: {
        tags: TAGS,
        summary: 'Downloads per version (since publish) and per day (the last 90 days, UTC)',
        params: RegistryPackageParams,
        response: { 200: RegistryDownloads, ...Failures },
      },
    },
    async (request) => deps.packages.downloads(request.params.name),
  );

  app.get(
    '/packages/:name/:version',
    {
      config: { registryAccess: 'read' },
      schema: {
        tags: TAGS,
        summary: 'One exact version, with its signature',
        params: RegistryVersionParams,
        response: { 200: RegistryVersion, ...Failures },
      },
    },
    async (request) => deps.packages.getVersion(request.params.name, request.params.version),
  );

  app.get(
    '/packages/:name/:version/download',
    {
      config: { registryAccess: 'download' },
      schema: {
        tags: TAGS,
        summary: 'The archive of one exact version (yanked ones too); the signature travels in headers',
        params: RegistryVersionParams,
        response: {
          200: {
            description:
              'The D4 archive. Headers: x-registry-signature, x-registry-key-id, x-archive-sha256, x-content-hash; x-registry-deprecated (the percent-encoded message) when the package is deprecated.',
            content: {
              'application/gzip': { schema: Type.Unsafe<Buffer>({ type: 'string', format: 'binary' }) },
            },
          },
          ...Failures,
        },
      },
    },
    async (request, reply) => {
      const { version, bytes, deprecated } = await deps.packages.download(request.params.name, request.params.version);
      // Percent-encoded: a header holds ASCII only, a message may not.
      if (deprecated !== null) void reply.header('x-registry-deprecated', encodeURIComponent(deprecated));
      return reply
        .type('application/gzip')
        .headers({
          'x-registry-signature': version.signature,
          'x-registry-key-id': version.key_id,
          'x-archive-sha256': version.archive_sha256,
          'x-content-hash': version.content_hash,
          'content-disposition': `attachment; filename="${version.name}-${version.version}.tar.gz"`,
        })
        .send(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    },
  );
};
