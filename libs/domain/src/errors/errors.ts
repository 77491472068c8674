import { PlatformError } from './platform-error.ts';

/**
 * Factories for the errors the platform raises, so that messages stay uniform and greppable.
 * Add a factory here rather than calling `new PlatformError` with ad-hoc text.
 */
export const Errors = {
  notFound: (kind: string, id: string) =>
    new PlatformError('NotFound', `${kind} '${id}' not found`, { details: { kind, id } }),
  /** An agent-scoped competency route for a competency the agent does not equip (404). */
  notEquipped: (agent: { id: string; name: string }, competencyId: string) =>
    new PlatformError('NotFound', `agent ${agent.name} does not equip competency '${competencyId}'`, {
      details: { kind: 'competency', id: competencyId, agent_id: agent.id },
    }),
  invalidId: (kind: string, value: string) =>
    new PlatformError('ValidationError', `invalid ${kind} id '${truncate(value)}': must be a UUID`, {
      details: { kind, value: truncate(value) },
    }),
  validation: (message: string, details?: Record<string, unknown>) =>
    new PlatformError('ValidationError', message, details === undefined ? {} : { details }),
  malformedBody: (message: string, details?: Record<string, unknown>) =>
    new PlatformError('MalformedBody', message, details === undefined ? {} : { details }),
  /** `expected` names what the route takes (the registry's COLLECTION.toml routes take TOML). */
  unsupportedMediaType: (contentType: string, expected = 'application/json') =>
    new PlatformError(
      'UnsupportedMediaType',
      `unsupported content type '${truncate(contentType)}': send ${expected}`,
    ),
  /** A body sent without any Content-Type (docs/http.md: refused like a wrong one, spec §Errors 415). */
  missingContentType: () =>
    new PlatformError('UnsupportedMediaType', 'a request body needs Content-Type: application/json (it had none)'),
  bodyTooLarge: (declared: number, limit: number) =>
    new PlatformError('SizeLimitExceeded', `request body of ${declared} bytes is over the limit of ${limit} bytes`, {
      details: { declared_bytes: declared, limit_bytes: limit },
    }),
  /** A message over `[agents] max_message_bytes` (the api answers it 413, like a body over its limit). */
  messageTooLarge: (bytes: number, limitBytes: number) =>
    new PlatformError(
      'SizeLimitExceeded',
      `message of ${bytes} bytes is over the limit of ${limitBytes} bytes ([agents] max_message_bytes)`,
      { details: { bytes, limit_bytes: limitBytes } },
    ),
  /**
   * An invocation's reply too large for the message bus to carry back to its caller (spec §Errors
   * SizeLimitExceeded, 500). Raised before anything is charged or remembered.
   */
  replyTooLarge: (bytes: number, limitBytes: number) =>
    new PlatformError(
      'SizeLimitExceeded',
      `the agent's reply is ${bytes} bytes on the message bus, over its maximum payload of ${limitBytes} bytes; nothing was charged`,
      { details: { bytes, limit_bytes: limitBytes } },
    ),
  /** Anything else over a size limit (spec §Errors SizeLimitExceeded), e.g. a request the bus cannot carry. */
  sizeLimit: (message: string, details?: Record<string, unknown>) =>
    new PlatformError('SizeLimitExceeded', message, details === undefined ? {} : { details }),
  requestTimeout: (secs: number) =>
    new PlatformError('RequestTimeout', `request exceeded the ${secs} s request timeout`),
  invalidState: (message: string, details?: Record<string, unknown>) =>
    new PlatformError('InvalidState', message, details === undefined ? {} : { details }),
  duplicate: (kind: string, id: string) =>
    new PlatformError('Duplicate', `${kind} '${id}' already exists`, { details: { kind, id } }),
  conflict: (message: string, details?: Record<string, unknown>) =>
    new PlatformError('Conflict', message, details === undefined ? {} : { details }),
  unauthenticated: (message: string) => new PlatformError('AuthError', message),
  /** `details.retry_after_secs` carries the wait across a bus hop, where only category, message and details travel. */
  rateLimited: (message: string, retryAfterSecs: number, details?: Record<string, unknown>) =>
    new PlatformError('RateLimited', message, { retryAfterSecs, retryable: true, details: { ...details, retry_after_secs: retryAfterSecs } }),
  permissionDenied: (message: string, details?: Record<string, unknown>) =>
    new PlatformError('PermissionDenied', message, details === undefined ? {} : { details }),
  config: (message: string, details?: Record<string, unknown>) =>
    new PlatformError('ConfigError', message, details === undefined ? {} : { details }),
  timeout: (message: string) => new PlatformError('Timeout', message, { retryable: true }),
  /**
   * An invoke idempotency key already processed (spec: "returns the cached result as an error
   * body with category DuplicateInvocation and HTTP 200"): the recorded result is `details.result`.
   */
  duplicateInvocation: (key: string, result: Record<string, unknown>) =>
    new PlatformError('DuplicateInvocation', `idempotency key '${truncate(key)}' was already processed; details.result holds its result`, {
      details: { idempotency_key: key, result },
    }),
  /**
   * A journaled state-changing tool call a re-run cannot get past (docs/tools.md "The tool-call
   * journal"): its outcome is unknown, or the re-run would not repeat it. 409: retrying the same
   * request cannot help; a person must look the keys up in the system of record. A workflow step
   * that meets it ends its run Escalated; an invocation answers it, and keeps the answer for its key.
   */
  toolCallsInDoubt: (why: string, calls: readonly Record<string, unknown>[]) =>
    new PlatformError('Conflict', why, { details: { reason: 'tool_calls_in_doubt', calls: calls.map((c) => ({ ...c })) } }),
  /** An idempotency key reused by the same caller for a different request (409; docs/invocation.md). */
  idempotencyKeyReused: (key: string) =>
    new PlatformError(
      'Conflict',
      `idempotency key '${truncate(key)}' was already used for a different request (message, source or workflow_type differ); use a new key`,
      { details: { idempotency_key: truncate(key, 256) } },
    ),
  /**
   * The agent worker running an invocation stopped sending heartbeats (it was killed, or lost its
   * connection): the caller gets this within seconds instead of waiting for the timeout. Nothing
   * was recorded under the invocation's idempotency key, which is free again within
   * `[agents] claim_lease_secs`: a retry with it runs the invocation once.
   */
  workerLost: (invocationId: string, silentMs: number) =>
    new PlatformError(
      'Internal',
      `the agent worker running this invocation stopped answering (no heartbeat for ${Math.round(silentMs / 1000)} s; it was probably killed): retry, with the same idempotency key if you sent one`,
      { retryable: true, details: { reason: 'worker_lost', invocation_id: invocationId } },
    ),
  /**
   * An invocation without an idempotency key whose worker was lost after it had started a
   * state-changing tool call (its fence said `calling`): the call may have taken effect, so the
   * invocation is not sent again (409, like a keyed invocation's call in doubt).
   */
  invocationCallInDoubt: (invocationId: string, call: { tool?: string | undefined; idempotency_key?: string | undefined; worker?: string | undefined }) =>
    new PlatformError(
      'Conflict',
      `the agent worker running invocation ${invocationId} was lost after it started the state-changing tool call '${call.tool ?? 'unknown'}' ` +
        `(key ${call.idempotency_key ?? 'unknown'}): its outcome is unknown, so the invocation was not run again; look the key up in the system of record ` +
        '(send an idempotency key to have such calls journaled and replayed)',
      {
        details: {
          reason: 'tool_calls_in_doubt',
          invocation_id: invocationId,
          calls: [{ tool: call.tool ?? null, idempotency_key: call.idempotency_key ?? null, state: 'unknown', worker: call.worker ?? null }],
        },
      },
    ),
  /** The caller of an invocation went away, or cancelled it: it was stopped and nothing charged. */
  invocationCancelled: (reason: string) => new PlatformError('Internal', `invocation cancelled: ${reason}`),
  /** A model provider failed or refused (502). Not retryable: the adapter already spent its retries. */
  provider: (providerId: string, message: string, details?: Record<string, unknown>) =>
    new PlatformError('ProviderError', `provider '${providerId}': ${message}`, { details: { provider: providerId, ...details } }),
  /** An OpenID issuer's discovery or JWKS endpoint failed, so a token cannot be checked now (502, retryable). */
  identityProvider: (issuer: string, message: string) =>
    new PlatformError('ProviderError', message, { retryable: true, details: { issuer } }),
  /** A model provider did not connect or answer in time. Not retryable: waiting again costs as much. */
  providerTimeout: (providerId: string, message: string, details?: Record<string, unknown>) =>
    new PlatformError('Timeout', `provider '${providerId}': ${message}`, { details: { provider: providerId, ...details } }),
  unavailable: (what: string, cause?: unknown) =>
    new PlatformError('Internal', `${what} is unavailable`, { cause, retryable: true }),
  /**
   * `[gateway] forced_local` with personal data in the request, no local-eligible model and
   * `when_no_local = "refuse"` (docs/privacy-gateway.md "Routing"): nothing reaches a provider.
   */
  noLocalModel: (categories: readonly string[]) =>
    new PlatformError(
      'PermissionDenied',
      `model invocation refused: personal data was detected (${categories.join(', ')}) and [gateway] forced_local sends it only to a local-eligible model, but none is configured; nothing was sent`,
      { details: { reason: 'no_local_model', pii_categories: [...categories] } },
    ),
  internal: (message: string, cause?: unknown) => new PlatformError('Internal', message, { cause }),
  /** One failed attempt of an outbound webhook delivery: the queue retries it (docs/webhooks.md). */
  deliveryFailed: (message: string) => new PlatformError('Internal', message, { retryable: true }),
  /** A package install or uninstall the catalog refuses (400, route-local category). */
  catalog: (message: string, details?: Record<string, unknown>) =>
    new PlatformError('CatalogError', message, details === undefined ? {} : { details }),
  /** A package or collection the configured registry does not know (docs/catalog.md "Installing by name"). */
  notInRegistry: (kind: 'package' | 'collection', name: string, registry: string) =>
    new PlatformError('NotFound', `${kind} '${name}' is not in the registry ${registry}`, { details: { kind, id: name, registry } }),
  /** `POST /catalog/install {name, version: <tag>}` naming a dist-tag the package does not have. */
  distTagNotInRegistry: (name: string, tag: string, tags: readonly string[], registry: string) =>
    new PlatformError(
      'NotFound',
      `package '${name}' has no dist-tag '${tag}' in the registry ${registry} (its tags: ${tags.length === 0 ? 'none' : tags.join(', ')}); nothing was installed`,
      { details: { kind: 'dist-tag', id: `${name}@${tag}`, registry, tags: [...tags] } },
    ),
  /** A mandatory package dependency is neither installed nor found (500 per the spec's table). */
  missingDependency: (message: string, details?: Record<string, unknown>) =>
    new PlatformError('MissingDependency', message, details === undefined ? {} : { details }),
  /**
   * Disconnect, reconnect or delete of an integration Running agents depend on (spec §States
   * "Integration": 403; the body is ours, docs/integrations.md "Refusals").
   */
  integrationInUse: (id: string, action: string, consumers: ReadonlyArray<{ agent_id: string; agent: string; competency: string; contract: string | null }>) =>
    new PlatformError(
      'PermissionDenied',
      `cannot ${action} integration '${id}': Running agent(s) ${[...new Set(consumers.map((c) => c.agent))].join(', ')} depend on it; suspend them first`,
      { details: { integration_id: id, consumers: consumers.map((c) => ({ ...c })) } },
    ),
  /**
   * A tool asked of an integration that does not run here (or anywhere). `sent: false`: no request
   * left, so the tool-call journal frees the call's position (docs/tools.md).
   */
  integrationNotConnected: (id: string, reason: string) =>
    new PlatformError('InvalidState', `integration '${id}' is not connected: ${reason}`, { details: { integration_id: id, sent: false } }),
  /** An integration whose transport this version cannot run (SOAP adapters). */
  integrationUnsupported: (id: string, transport: string) =>
    new PlatformError(
      'ValidationError',
      `integration '${id}' is a ${transport} adapter, which this version does not support (only MCP servers and REST adapters connect); it stays Disabled`,
      { details: { integration_id: id, transport } },
    ),
  /** A tool call that outlived `[integrations] call_timeout_secs`. */
  integrationCallTimeout: (id: string, tool: string, secs: number) =>
    new PlatformError('Timeout', `integration '${id}': tool '${tool}' did not answer within ${secs} s ([integrations] call_timeout_secs); the call was cancelled`, {
      details: { integration_id: id, tool, timeout_secs: secs },
    }),
  /** A tool call the platform could not complete (the server died, the connection broke). */
  integrationCallFailed: (id: string, tool: string, message: string) =>
    new PlatformError('Internal', `integration '${id}': tool '${tool}' failed: ${message}`, {
      retryable: true,
      details: { integration_id: id, tool },
    }),
  /** Connect or reconnect: every live agent worker failed to start the integration's server. */
  integrationStartFailed: (id: string, message: string) =>
    new PlatformError('InitError', `integration '${id}' could not be started: ${message}; it stays disconnected`, {
      details: { integration_id: id },
    }),
  /**
   * Installing a name@version a registry revoked (docs/catalog.md "Revocations"): 400 CatalogError
   * naming each revocation and the override route; nothing is written.
   */
  packageRevoked: (revoked: ReadonlyArray<RevokedPackage>) =>
    new PlatformError(
      'CatalogError',
      `${describeRevoked(revoked)}; installing ${revoked.length === 1 ? 'it' : 'them'} is refused until an operator overrides with POST ${revoked.map((r) => overrideRoute(r.name)).join(', POST ')}; nothing was installed`,
      { details: { revoked: revoked.map((r) => ({ ...r, override_route: overrideRoute(r.name) })) } },
    ),
  /** Activating an agent whose package, or a package it depends on or equips, is revoked (ActivationError, like any refused activation). */
  activationRevoked: (agent: { id?: string; name: string }, revoked: ReadonlyArray<RevokedPackage>) =>
    new PlatformError(
      'ActivationError',
      `agent ${agent.name} cannot be activated: ${describeRevoked(revoked)}; activation is refused until an operator overrides with POST ${revoked.map((r) => overrideRoute(r.name)).join(', POST ')}`,
      {
        details: {
          ...(agent.id === undefined ? {} : { agent_id: agent.id }),
          agent: agent.name,
          revoked: revoked.map((r) => ({ ...r, override_route: overrideRoute(r.name) })),
        },
      },
    ),
  /** An agent cannot become Running (route-local category, 500). */
  activation: (message: string, details?: Record<string, unknown>) =>
    new PlatformError('ActivationError', message, details === undefined ? {} : { details }),
};

/** A revoked name@version as errors name it. */
export interface RevokedPackage {
  name: string;
  version: string;
  reason: string;
  seq: number;
}

const overrideRoute = (name: string): string => `/catalog/installed/${name}/override-revocation`;

function describeRevoked(revoked: ReadonlyArray<RevokedPackage>): string {
  return revoked.map((r) => `package ${r.name} ${r.version} was revoked by the registry (feed seq ${r.seq}: ${r.reason})`).join('; ');
}

function truncate(value: string, max = 80): string {
  return value.length > max ? `${value.slice(0, max)}…` : value;
}
