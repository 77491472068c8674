import { ErrorEnvelope, RegistryCollection, RegistryCollectionList, RegistryPackageParams } from '@agent-platform/contracts';
import { Errors } from '@agent-platform/domain';
import { createCollectionService, type CollectionOutcome } from '@agent-platform/registry-core';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { RegistryApp } from '../registry-app.ts';
import { collectionError } from './collection-errors.ts';
import { Forbidden } from './forbidden-schema.ts';
import type { RegistryRoutePlugin } from './registry-route.ts';

const TAGS = ['collections'];
/** A COLLECTION.toml is TOML: `application/toml` (RFC 9618), or `text/plain` for tools that know no better. */
const TOML_TYPES = ['application/toml', 'text/plain'];
const CollectionToml = Type.String({ description: 'The COLLECTION.toml text (Content-Type application/toml or text/plain).' });
const Failures = { 400: ErrorEnvelope, 403: Forbidden, 404: ErrorEnvelope, 409: ErrorEnvelope, 415: ErrorEnvelope };

/**
 * Collections (docs/registry-search.md "Collections"): COLLECTION.toml published, read, replaced
 * by a higher version and deleted. Writes take access `publish`; only a collection's owners (its
 * first publisher) or a registry-admin may replace or delete it. Reads take `read`.
 *
 * The routes live in their own encapsulated scope because their bodies are TOML, not JSON: the
 * scope's parsers take the two TOML types as text and answer any other type 415, without
 * changing how the rest of the registry parses bodies.
 */
export const collectionRoutes: RegistryRoutePlugin = (app, deps) => {
  const service = createCollectionService({ store: deps.store, now: () => deps.clock.now() });
  const caller = (request: FastifyRequest) => {
    // A publisher token's scopes are about packages (docs/registry-auth.md "Tokens"): collections take the identity's own credential.
    if (request.registryCaller.grant !== undefined)
      throw Errors.permissionDenied('a registry token acts on packages only (its scopes); publish, replace or delete collections with your own key or access token');
    return { identity: request.registryCaller.identity, role: request.registryCaller.role };
  };

  void app.register(async (scope: RegistryApp) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(TOML_TYPES, { parseAs: 'string' }, (_request, body, done) => done(null, body));
    scope.addContentTypeParser('*', { parseAs: 'string' }, (request, _body, done) => {
      const contentType = request.headers['content-type'] ?? '';
      done(contentType.trim() === '' ? Errors.unsupportedMediaType('(none)', 'application/toml') : Errors.unsupportedMediaType(contentType, 'application/toml'));
    });

    scope.get(
      '/collections',
      { config: { registryAccess: 'read' }, schema: { tags: TAGS, summary: 'Every collection, by name', response: { 200: RegistryCollectionList } } },
      async () => ({ collections: await service.list() }),
    );

    scope.get(
      '/collections/:name',
      {
        config: { registryAccess: 'read' },
        schema: { tags: TAGS, summary: 'One collection', params: RegistryPackageParams, response: { 200: RegistryCollection, 404: ErrorEnvelope } },
      },
      async (request) => {
        const found = await service.get(request.params.name);
        if (found === null) throw Errors.notFound('collection', request.params.name);
        return found;
      },
    );

    scope.post(
      '/collections',
      {
        config: { registryAccess: 'publish' },
        schema: {
          tags: TAGS,
          summary: 'Publish a collection from its COLLECTION.toml (every transitive dependency included); the caller owns it',
          consumes: TOML_TYPES,
          body: CollectionToml,
          response: { 201: RegistryCollection, ...Failures },
        },
      },
      async (request, reply) => reply.code(201).send(valueOf(await service.publish(request.body, caller(request)))),
    );

    scope.put(
      '/collections/:name',
      {
        config: { registryAccess: 'publish' },
        schema: {
          tags: TAGS,
          summary: 'Replace a collection by a COLLECTION.toml of the same name and a higher version (owners or registry-admin)',
          consumes: TOML_TYPES,
          params: RegistryPackageParams,
          body: CollectionToml,
          response: { 200: RegistryCollection, ...Failures },
        },
      },
      async (request) => valueOf(await service.replace(request.params.name, request.body, caller(request))),
    );

    scope.delete(
      '/collections/:name',
      {
        config: { registryAccess: 'publish' },
        schema: {
          tags: TAGS,
          summary: 'Delete a collection (owners or registry-admin); its packages stay published',
          params: RegistryPackageParams,
          response: { 204: Type.Null({ description: 'Deleted.' }), ...Failures },
        },
      },
      async (request, reply) => {
        valueOf(await service.remove(request.params.name, caller(request)));
        return reply.code(204).send(null);
      },
    );
  });
};

function valueOf<T>(outcome: CollectionOutcome<T>): T {
  if (!outcome.ok) throw collectionError(outcome.failure);
  return outcome.value;
}
