import { randomUUID } from 'node:crypto';
import type { Caller } from '@agent-platform/domain';
import Fastify, { LogController } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ApiApp, RoutePlugin } from './api-app.ts';
import type { ApiDeps } from './deps.ts';
import './route-config.ts';
import { responseHeadersHook, apiVersionHook } from './http/api-version.ts';
import { auditHook } from './http/audit-hook.ts';
import { authenticateHook } from './http/authenticate.ts';
import { authorizeHook } from './http/authorize.ts';
import { bodyCounterHook, bodyLimitHook } from './http/body-limit.ts';
import { clientAddressHook } from './http/client-address-hook.ts';
import { installContentTypeParsers } from './http/content-type.ts';
import { installCors } from './http/cors.ts';
import { crossSiteHook } from './http/cross-site.ts';
import { installErrorHandling } from './http/error-handler.ts';
import { ipAllowlistHook } from './http/ip-allowlist.ts';
import { installOpenApi } from './http/openapi.ts';
import { requestObserverHook } from './http/request-observer.ts';
import { installRequestTracing } from './http/request-tracing.ts';
import { requestTimeoutHook } from './http/request-timeout.ts';
import { trackRoutes } from './http/route-catalog.ts';
import { uuidParamsHook } from './http/uuid-params.ts';
import { lazySerializerFactory } from './http/serializer-compiler.ts';
import { validatorCompiler } from './http/validator-compiler.ts';
import { routePlugins } from './routes/index.ts';

export interface BuildApiOptions {
  /** Extra route groups after the standard ones (surfaces mounted by a root, test-only routes). */
  routes?: readonly RoutePlugin[];
  /** PEM cert and key: the app is built for an HTTPS listener (`[server.tls]`). */
  https?: { cert: Buffer; key: Buffer } | null;
}

/** Fastify's own body limit is only a backstop (fixed at boot); bodyLimitHook applies the real one. */
const BODY_LIMIT_BACKSTOP = 1024 * 1024 * 1024;

/**
 * Builds the api surface without listening (tests use `inject`; service.ts listens). The order of
 * the hooks below IS the spec's precedence and must not be shuffled:
 *
 * onRequest (before the body is read; Fastify runs these for unmatched URLs too):
 *   -  tracing        (only while tracing is on) the request's span; every later step runs in it
 *   0. CORS            preflights answered before authentication (browsers send no credential)
 *   a. api-version     §Versioning: unknown Api-Version -> 400
 *   b. request-timeout §Limits: 408 after request_timeout_secs
 *   c. client address  the peer, or the client a trusted proxy names (X-Forwarded-For)
 *      ip-allowlist    §Limits "allowed_ips" -> 403 PermissionDenied
 *      cross-site      auth mode disabled only: Host, Origin, Sec-Fetch-Site -> 403 PermissionDenied
 *   d. authenticate    §Authentication rule 1: 401 before routing, so unknown path -> 401 not 404
 *   e. authorize       rule 6 + "Rules of the model" 5: flat 403 before any 413/415/422
 *   f. body-limit      §Limits: declared Content-Length over body_limit_bytes -> 413
 * preParsing: byte counter for chunked bodies (413)
 * content-type parsers (g): 415 for a present non-JSON type or a body with no type, 422 for malformed JSON
 * preValidation (h): uuid-params, §Errors case rule 1 -> 400 naming the id kind
 * validation (i): error handler maps schema errors to 422 (wrong type) / 400 (everything else)
 * onSend (j): audit of mutating requests and role denials, awaited before the bytes leave;
 *             Api-Version and X-Request-Id response headers
 * onResponse (k): metrics and the request log line
 */
export async function buildApi(deps: ApiDeps, options: BuildApiOptions = {}): Promise<ApiApp> {
  const app = Fastify({
    loggerInstance: deps.logger,
    // Fastify's own per-request lines are off: request-observer writes one concise line instead.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: () => randomUUID(),
    bodyLimit: BODY_LIMIT_BACKSTOP,
    // Vault key names may be 128 characters (docs/vault.md); the router's default of 100 would
    // answer 414 before the route could validate them.
    routerOptions: { maxParamLength: 256 },
    schemaController: { compilersFactory: { buildSerializer: lazySerializerFactory } },
    ...(options.https ? { https: options.https } : {}),
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as ApiApp;

  app.setValidatorCompiler(validatorCompiler);
  // Replaced per request by the authentication hook before any handler can read it.
  app.decorateRequest('caller', null as unknown as Caller);
  app.decorateRequest('clientAddress', '');
  app.decorateRequest('auditMetadata', null);
  app.decorateRequest('auditedAs', null);
  trackRoutes(app);
  installErrorHandling(app);
  installContentTypeParsers(app);

  installRequestTracing(app);
  await installCors(app, deps.config);
  app.addHook('onRequest', apiVersionHook);
  app.addHook('onRequest', requestTimeoutHook(deps.config));
  app.addHook('onRequest', clientAddressHook(deps.config));
  app.addHook('onRequest', ipAllowlistHook(deps.config));
  app.addHook('onRequest', crossSiteHook(deps.config, options.https != null));
  app.addHook('onRequest', authenticateHook(deps));
  app.addHook('onRequest', authorizeHook);
  app.addHook('onRequest', bodyLimitHook(deps.config));
  app.addHook('preParsing', bodyCounterHook(deps.config));
  app.addHook('preValidation', uuidParamsHook);
  app.addHook('onSend', auditHook(deps));
  app.addHook('onSend', responseHeadersHook);
  app.addHook('onResponse', requestObserverHook(deps));

  await installOpenApi(app, deps);
  for (const plugin of [...routePlugins, ...(options.routes ?? [])]) {
    await app.register(async (scope) => plugin(scope as ApiApp, deps));
  }
  return app;
}
