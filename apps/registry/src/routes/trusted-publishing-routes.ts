import {
  ErrorEnvelope,
  FlatError,
  RegistryPackageParams,
  RegistryTrustedPublishers,
  TrustedPublishingExchangeBody,
  TrustedPublishingToken,
} from '@agent-platform/contracts';
import { Errors } from '@agent-platform/domain';
import { claimedIssuer, isTokenRejected } from '@agent-platform/oidc';
import { createTrustedPublisherService, createTrustedPublishingExchange, type TrustedPublishingExchangeResult } from '@agent-platform/registry-core';
import { actorOf } from '../auth/registry-access.ts';
import { registryAuthServicesFor } from '../auth/registry-auth-services.ts';
import { failedAttempt } from '../auth/failed-attempt.ts';
import { Forbidden } from './forbidden-schema.ts';
import { registryAudit } from './registry-audit.ts';
import type { RegistryRoutePlugin } from './registry-route.ts';

const Failures = { 400: ErrorEnvelope, 403: Forbidden, 404: ErrorEnvelope, 415: ErrorEnvelope, 422: ErrorEnvelope };

/**
 * Trusted publishing (docs/registry-auth.md "Trusted publishing"), as PyPI's and npm's: owners say
 * which CI identities may publish a package (`/packages/{name}/trusted-publishers`), and a CI job
 * exchanges its OIDC token for a publisher token of 15 minutes that publishes those packages only
 * (`POST /trusted-publishing/exchange`). The exchange reads no registry credential (access
 * `public`): the JWT in its body is the credential, so a refused one is a failed attempt counted
 * towards the client's lockout, like a bad bearer credential. Never logged: the JWT, the token.
 */
export const trustedPublishingRoutes: RegistryRoutePlugin = (app, deps) => {
  const auth = registryAuthServicesFor(deps);
  const publishers = createTrustedPublisherService(deps);
  const exchange = createTrustedPublishingExchange({ store: deps.store, tokens: auth.tokens, validators: auth.validators });
  const record = registryAudit(deps);
  const audit = (result: TrustedPublishingExchangeResult) =>
    record({
      category: 'keys',
      identity: result.identity,
      role: 'publisher',
      action: 'registry.trusted_publishing.exchanged',
      target: result.token_id,
      result: '201',
      metadata: { issuer: result.issuer, claims: result.claims, packages: result.packages, expires_at: result.expires_at },
    });

  app.get(
    '/packages/:name/trusted-publishers',
    {
      config: { registryAccess: 'publish' },
      schema: {
        tags: ['packages'],
        summary: 'The CI identities (issuer and exact claims) allowed to publish the package by trusted publishing',
        params: RegistryPackageParams,
        response: { 200: RegistryTrustedPublishers, ...Failures },
      },
    },
    async (request) => publishers.get(request.params.name, actorOf(request.registryCaller)),
  );

  app.put(
    '/packages/:name/trusted-publishers',
    {
      config: { registryAccess: 'publish' },
      schema: {
        tags: ['packages'],
        summary: 'Replace the trusted publishers of a package (an empty list turns trusted publishing off)',
        params: RegistryPackageParams,
        body: RegistryTrustedPublishers,
        response: { 200: RegistryTrustedPublishers, ...Failures },
      },
    },
    async (request) => publishers.replace(request.params.name, request.body.publishers, actorOf(request.registryCaller)),
  );

  app.post(
    '/trusted-publishing/exchange',
    {
      config: { registryAccess: 'public' },
      schema: {
        tags: ['registry-auth'],
        summary: "Exchange a CI job's OIDC token for a 15-minute token publishing the packages that trust it",
        body: TrustedPublishingExchangeBody,
        response: { 201: TrustedPublishingToken, 401: ErrorEnvelope, 403: ErrorEnvelope, 415: ErrorEnvelope, 422: ErrorEnvelope, 429: ErrorEnvelope, 502: ErrorEnvelope, 503: FlatError },
      },
    },
    async (request, reply) => {
      // Without identities (mode disabled) a token authenticates nobody: as /tokens, 503.
      if (deps.settings().auth.mode === 'disabled') return reply.code(503).send({ error: 'Auth is not enabled' });
      let result: TrustedPublishingExchangeResult;
      try {
        result = await exchange.exchange(request.body.token);
      } catch (error) {
        if (!isTokenRejected(error)) throw error;
        if (error.reason === 'keys_unavailable') throw Errors.identityProvider(claimedIssuer(request.body.token) ?? 'unknown', error.message);
        return failedAttempt(request, { backoff: auth.backoff, logger: deps.logger }, 'invalid_ci_token', `invalid CI token: ${error.message}`);
      }
      await audit(result);
      return reply.code(201).send({ token: result.token, expires_at: result.expires_at, packages: result.packages, identity: result.identity });
    },
  );
};
