import {
  ErrorEnvelope,
  RegistryDeprecationBody,
  RegistryDistTagBody,
  RegistryDistTagParams,
  RegistryOwnerAcceptBody,
  RegistryOwnersBody,
  RegistryPackage,
  RegistryPackageOwners,
  RegistryPackageParams,
  RegistryVersion,
  RegistryVersionParams,
  RegistryYankBody,
} from '@agent-platform/contracts';
import { Forbidden } from './forbidden-schema.ts';
import type { RegistryRoutePlugin } from './registry-route.ts';
import { actorOf } from '../auth/registry-access.ts';

/**
 * Changes to published packages (docs/registry.md "Yank", "Ownership", "Dist-tags" and "Deprecation"): access `publish`, and
 * the package service lets only the package's owners (or a registry admin) through.
 */
const TAGS = ['packages'];
const Failures = {
  400: ErrorEnvelope,
  403: Forbidden,
  404: ErrorEnvelope,
  415: ErrorEnvelope,
  422: ErrorEnvelope,
};

export const packageChangeRoutes: RegistryRoutePlugin = (app, deps) => {
  app.post(
    '/packages/:name/:version/yank',
    {
      config: { registryAccess: 'publish' },
      schema: {
        tags: TAGS,
        summary:
          'Yank (or un-yank with yanked: false) one version; security: true also revokes it on the feed',
        params: RegistryVersionParams,
        body: RegistryYankBody,
        response: { 200: RegistryVersion, ...Failures },
      },
    },
    async (request) => {
      return deps.packages.yank(request.params.name, request.params.version, request.body, actorOf(request.registryCaller));
    },
  );

  app.get(
    '/packages/:name/owners',
    {
      config: { registryAccess: 'authenticated' },
      schema: {
        tags: TAGS,
        summary: "The owners, and the pending invitations you may see: all for the package's owners and registry admins, your own for an invitee",
        params: RegistryPackageParams,
        response: { 200: RegistryPackageOwners, 400: ErrorEnvelope, 404: ErrorEnvelope },
      },
    },
    async (request) => deps.packages.owners(request.params.name, actorOf(request.registryCaller)),
  );

  app.put(
    '/packages/:name/owners',
    {
      config: { registryAccess: 'publish' },
      schema: {
        tags: TAGS,
        summary: 'Set the owner list: owners left out are removed at once, new ones invited until they accept (a registry admin: applied at once)',
        params: RegistryPackageParams,
        body: RegistryOwnersBody,
        response: { 200: RegistryPackage, 409: ErrorEnvelope, ...Failures },
      },
    },
    async (request) => {
      return deps.packages.setOwners(request.params.name, request.body.owners, actorOf(request.registryCaller));
    },
  );

  app.post(
    '/packages/:name/owners/accept',
    {
      config: { registryAccess: 'publish' },
      schema: {
        tags: TAGS,
        summary: 'Accept an invitation to own the package: your own (the default), or a team you own (owner: team:<name>)',
        params: RegistryPackageParams,
        body: RegistryOwnerAcceptBody,
        response: { 200: RegistryPackage, ...Failures },
      },
    },
    async (request) => deps.packages.acceptOwner(request.params.name, request.body.owner, actorOf(request.registryCaller)),
  );

  app.put(
    '/packages/:name/dist-tags/:tag',
    {
      config: { registryAccess: 'publish' },
      schema: {
        tags: TAGS,
        summary: 'Point a dist-tag (next, beta...) at a published version; latest is computed, never set',
        params: RegistryDistTagParams,
        body: RegistryDistTagBody,
        response: { 200: RegistryPackage, 409: ErrorEnvelope, ...Failures },
      },
    },
    async (request) => deps.packages.setDistTag(request.params.name, request.params.tag, request.body.version, actorOf(request.registryCaller)),
  );

  app.delete(
    '/packages/:name/dist-tags/:tag',
    {
      config: { registryAccess: 'publish' },
      schema: { tags: TAGS, summary: 'Remove a dist-tag', params: RegistryDistTagParams, response: { 200: RegistryPackage, ...Failures } },
    },
    async (request) => deps.packages.setDistTag(request.params.name, request.params.tag, null, actorOf(request.registryCaller)),
  );

  app.put(
    '/packages/:name/deprecation',
    {
      config: { registryAccess: 'publish' },
      schema: {
        tags: TAGS,
        summary: 'Deprecate the package with a message (every version still installs)',
        params: RegistryPackageParams,
        body: RegistryDeprecationBody,
        response: { 200: RegistryPackage, ...Failures },
      },
    },
    async (request) => deps.packages.setDeprecation(request.params.name, request.body.message, actorOf(request.registryCaller)),
  );

  app.delete(
    '/packages/:name/deprecation',
    {
      config: { registryAccess: 'publish' },
      schema: { tags: TAGS, summary: 'Take the deprecation off', params: RegistryPackageParams, response: { 200: RegistryPackage, ...Failures } },
    },
    async (request) => deps.packages.setDeprecation(request.params.name, null, actorOf(request.registryCaller)),
  );
};
