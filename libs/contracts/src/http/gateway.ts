import { Type, type Static } from 'typebox';
import { PiiCategory, PiiCategoryCounts } from '../privacy.ts';

/**
 * Bodies of the privacy gateway's routes (docs/privacy-gateway.md): GET /gateway/pools and
 * GET /gateway/traffic (spec: routed, payloads ours), GET /compliance/pii-coverage and
 * GET /compliance/forced-local-routing (spec §Compliance: fields fixed). None ever holds a value
 * of personal data or a token: counts and category names only.
 */

const Timestamp = Type.String({ description: 'ISO 8601, UTC, milliseconds (`Date.toISOString()`).' });
const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

export const ProviderHealth = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('failing'), Type.Literal('unknown')], {
    description:
      '`ok`: built in, or its latest finished request in the recent traffic succeeded; `failing`: that request failed; `unknown`: no recent traffic. No probe is sent.',
  }),
  last_ok_at: NullableTimestamp,
  last_failure_at: NullableTimestamp,
});
export type ProviderHealth = Static<typeof ProviderHealth>;

export const PoolProvider = Type.Object({
  id: Type.String(),
  kind: Type.Union([Type.Literal('local'), Type.Literal('openai')]),
  base_url: Type.Optional(
    Type.String({ description: 'The endpoint, without credentials; absent for the built-in provider.' }),
  ),
  models: Type.Array(Type.String()),
  local_eligible: Type.Boolean({
    description: 'Built-in `local`, or `[[providers]] local_eligible = true`.',
  }),
  default: Type.Boolean({ description: 'The provider of `[models] default`.' }),
  forced_local_target: Type.Boolean({
    description:
      'With forced_local on, requests with personal data go to this provider (see policy.local_model).',
  }),
  health: ProviderHealth,
});
export type PoolProvider = Static<typeof PoolProvider>;

export const ProviderPool = Type.Object({
  pool: Type.Union([Type.Literal('local'), Type.Literal('cloud')]),
  providers: Type.Array(PoolProvider),
});
export type ProviderPool = Static<typeof ProviderPool>;

export const GatewayPolicyView = Type.Object({
  enabled: Type.Boolean(),
  categories: Type.Array(PiiCategory),
  forced_local: Type.Boolean(),
  when_no_local: Type.Union([Type.Literal('refuse'), Type.Literal('send_tokenised')]),
  default_model: Type.String({
    description: '`[models] default`: where a request goes unless the policy routes it elsewhere.',
  }),
  local_model: Type.Union([Type.String(), Type.Null()], {
    description:
      "Where a request with personal data goes under forced_local: the default model when it is local-eligible, else [gateway] local_model or the first local-eligible provider's model; null when there is none.",
  }),
});
export type GatewayPolicyView = Static<typeof GatewayPolicyView>;

export const GatewayPools = Type.Object({
  policy: GatewayPolicyView,
  pools: Type.Array(ProviderPool, {
    description: 'Always two: `local` (local-eligible providers) then `cloud`.',
  }),
});
export type GatewayPools = Static<typeof GatewayPools>;

/** Largest `limit` of GET /gateway/traffic. */
export const GATEWAY_TRAFFIC_MAX_LIMIT = 500;

export const GatewayTrafficQuerystring = Type.Object({
  limit: Type.Integer({
    minimum: 1,
    maximum: GATEWAY_TRAFFIC_MAX_LIMIT,
    default: 50,
    description: `Decisions returned, newest first; 1 to ${GATEWAY_TRAFFIC_MAX_LIMIT}.`,
  }),
});
export type GatewayTrafficQuerystring = Static<typeof GatewayTrafficQuerystring>;

export const TrafficOutcome = Type.Union(
  [
    Type.Literal('pending'),
    Type.Literal('ok'),
    Type.Literal('failed'),
    Type.Literal('cancelled'),
    Type.Literal('refused'),
  ],
  {
    description:
      '`pending` while the model call runs (and, until it expires, when its worker died); `failed`: the provider failed or timed out; `cancelled`: the invocation was aborted (client gone, suspend, invocation timeout); `refused`: forced-local with no local model.',
  },
);
export type TrafficOutcome = Static<typeof TrafficOutcome>;

/** One routed model request (one invocation's tool loop). */
export const TrafficDecision = Type.Object({
  id: Type.String(),
  at: Timestamp,
  finished_at: NullableTimestamp,
  correlation_id: Type.String(),
  agent_id: Type.String(),
  identity: Type.String({ description: 'Who asked (an API key name, `system:workflow`, ...).' }),
  requested_provider: Type.String(),
  requested_model: Type.String(),
  provider: Type.Union([Type.String(), Type.Null()], { description: 'Where it went; null when refused.' }),
  model: Type.Union([Type.String(), Type.Null()]),
  pii_detected: Type.Union([Type.Boolean(), Type.Null()], {
    description: 'null when no category is configured (nothing was looked for).',
  }),
  categories: PiiCategoryCounts,
  count: Type.Integer({ minimum: 0, description: 'Distinct values replaced by tokens.' }),
  local_eligible: Type.Boolean(),
  forced_local: Type.Boolean(),
  rerouted: Type.Boolean({ description: 'Sent somewhere other than the requested model.' }),
  tokenised: Type.Boolean(),
  hydrated: Type.Boolean(),
  restored: Type.Integer({
    minimum: 0,
    description: 'Tokens put back into replies and tool-call arguments.',
  }),
  outcome: TrafficOutcome,
});
export type TrafficDecision = Static<typeof TrafficDecision>;

export const GatewayTraffic = Type.Object({
  decisions: Type.Array(TrafficDecision, { description: 'Newest first.' }),
  retention_hours: Type.Integer({
    minimum: 1,
    description: '`[gateway] traffic_retention_hours`: older decisions have expired.',
  }),
});
export type GatewayTraffic = Static<typeof GatewayTraffic>;

const Disabled = Type.Optional(
  Type.Literal('disabled', { description: 'Present only with `[audit] enabled = false`.' }),
);

export const PiiCoverage = Type.Object({
  coverage_pct: Type.Union([Type.Number(), Type.Null()], {
    description: 'hydrated / tokenised * 100; 100 when nothing was tokenised; null when audit is disabled.',
  }),
  tokenised: Type.Integer({ minimum: 0 }),
  hydrated: Type.Integer({ minimum: 0 }),
  status: Disabled,
});
export type PiiCoverage = Static<typeof PiiCoverage>;

/** The spec's constant target of GET /compliance/forced-local-routing. */
export const FORCED_LOCAL_TARGET_PCT = 85.0;

export const ForcedLocalRouting = Type.Object({
  forced_local: Type.Integer({ minimum: 0 }),
  local_eligible: Type.Integer({ minimum: 0 }),
  pct_of_local_eligible: Type.Union([Type.Number(), Type.Null()], {
    description: 'forced_local / local_eligible * 100; null when local_eligible is 0.',
  }),
  target_pct: Type.Number(),
  status: Disabled,
});
export type ForcedLocalRouting = Static<typeof ForcedLocalRouting>;
