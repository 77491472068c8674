import { PII_CATEGORIES, type TrafficDecision } from '@agent-platform/contracts';
import {
  createPiiDetector,
  createTokenVault,
  type PiiDetector,
  type TokenVault,
} from '@agent-platform/privacy';
import { Errors } from '../errors/errors.ts';
import type { ChatMessage } from '../models/model-provider.ts';
import { parseModelKey, type ModelRegistry, type ResolvedModel } from '../models/model-registry.ts';
import type { Clock } from '../time/clock.ts';
import { timeOrderedUuid } from '../time/time-ordered-id.ts';
import type { BegunDecision, GatewayTraffic } from './gateway-traffic.ts';
import type { PrivacyActor, PrivacyAudit, RoutingMetadata } from './privacy-audit.ts';
import { decideRoute, type GatewaySettings, type RouteDecision } from './routing-policy.ts';
import { tokeniseRequest, tokenisingProvider } from './tokenising-provider.ts';

/** One model request as the invocation hands it over: the conversation and who it is for. */
export interface GatewayRequest {
  messages: ChatMessage[];
  agent_id: string;
  correlation_id: string;
  /** The caller's identity and role; `system` when absent (a cron fire, a workflow step). */
  identity?: string;
  role?: string;
}

/** The gateway's hold on one model request (one invocation's tool loop). */
export interface GatewaySession {
  /** The routed model; its provider tokenises every call and hydrates every reply. */
  readonly model: ResolvedModel;
  /** True once a call carried tokens (POST /workflows/step `pii_tokenized`). */
  piiTokenized(): boolean;
  /** The tool loop finished: its replies were hydrated. Records `gateway.pii.hydrated` when it was tokenised. */
  completed(): Promise<void>;
  /** The tool loop failed (`cancelled`: it was aborted): no hydrated entry, the decision is settled. */
  failed(cancelled: boolean): Promise<void>;
}

/**
 * The privacy gateway at the model call (docs/privacy-gateway.md): detects personal data in the
 * conversation, routes the request by the policy of `[gateway]`, and wraps the chosen provider so
 * that it only ever sees tokens. The worker and the all-in-one get it from their composition roots
 * (composeInvocationService); the invocation opens one session per invocation.
 */
export interface ModelGateway {
  /** PermissionDenied (`no_local_model`) when forced-local routing refuses the request: nothing is sent. */
  open(request: GatewayRequest): Promise<GatewaySession>;
}

export interface ModelGatewayDeps {
  models: Pick<ModelRegistry, 'resolve'>;
  settings: () => GatewaySettings;
  audit: PrivacyAudit;
  traffic: GatewayTraffic;
  clock: Clock;
  /** Traffic writes that failed (best effort: the audit trail is the record): logged. */
  warn?: (context: Record<string, unknown>, message: string) => void;
}

export function createModelGateway(deps: ModelGatewayDeps): ModelGateway {
  const warn = deps.warn ?? (() => undefined);
  // One detector per `[gateway]` table: a reload swaps the table whole, so a new one is built then.
  const detectors = new WeakMap<object, Promise<PiiDetector>>();
  const detectorOf = (gateway: GatewaySettings['gateway']): Promise<PiiDetector> => {
    let detector = detectors.get(gateway);
    if (detector === undefined) {
      detector = createPiiDetector({
        categories: gateway.categories,
        policyNumberPatterns: gateway.policy_number_patterns,
        claimNumberPatterns: gateway.claim_number_patterns,
      });
      detectors.set(gateway, detector);
    }
    return detector;
  };

  async function open(request: GatewayRequest): Promise<GatewaySession> {
    const settings = deps.settings();
    const requested = deps.models.resolve();
    if (!settings.gateway.enabled) return passthrough(requested);
    const detector = await detectorOf(settings.gateway);
    const vault = createTokenVault({ detector });
    // Tokenising the conversation now is what detects; the provider's calls reuse the same tokens.
    tokeniseRequest(vault, { model: requested.model, messages: request.messages });
    const found = vault.tokenised().categories;
    const categories = PII_CATEGORIES.filter((c) => (found[c] ?? 0) > 0);
    const decision = decideRoute(
      settings,
      requested.key,
      detector.categories.length === 0 ? null : { categories },
    );
    const actor: PrivacyActor = {
      identity: request.identity ?? 'system',
      role: request.role ?? 'system',
      agent_id: request.agent_id,
    };
    const record = newDecision(deps.clock, request, actor, decision);
    if (decision.target_key === null) {
      await deps.audit.routing(actor, routingMetadata(decision, request.correlation_id), 'refused');
      await deps.traffic
        .begin(
          { ...record, outcome: 'refused', finished_at: record.at },
          settings.gateway.traffic_retention_hours,
        )
        .catch((err: unknown) => warn({ err }, 'could not record a gateway decision'));
      throw Errors.noLocalModel(decision.pii_categories);
    }
    const target =
      decision.target_key === requested.key ? requested : deps.models.resolve(decision.target_key);
    return session({
      target,
      decision,
      vault,
      actor,
      record,
      request,
      retentionHours: settings.gateway.traffic_retention_hours,
    });
  }

  function session(s: {
    target: ResolvedModel;
    decision: RouteDecision;
    vault: TokenVault;
    actor: PrivacyActor;
    record: TrafficDecision;
    request: GatewayRequest;
    retentionHours: number;
  }): GatewaySession {
    const { target, decision, vault, actor, record } = s;
    const correlationId = s.request.correlation_id;
    let routed = false;
    let tokenised = false;
    let begun = false;
    // What the traffic row's write left, for the settle to rewrite without reading it again.
    let written: BegunDecision | undefined;
    // Runs before each provider call, after its request was tokenised: the routing entry before the
    // first call, the tokenised entry before the first call that carries a token. A failed audit
    // write fails the call: no token leaves the process without its record.
    const beforeCall = async (): Promise<void> => {
      const counts = vault.tokenised();
      // The traffic row goes to the store beside the audit entries, not after them, so that the
      // embedded store's group commit carries them in one sync (docs/performance.md "Privacy gateway").
      const beginning = begun
        ? Promise.resolve()
        : deps.traffic
            .begin({ ...record, count: counts.count, categories: counts.categories, tokenised: counts.count > 0 }, s.retentionHours)
            .then(
              (row) => {
                written = row;
              },
              (err: unknown) => warn({ err }, 'could not record a gateway decision'),
            );
      begun = true;
      try {
        if (!routed) {
          await deps.audit.routing(
            actor,
            { ...routingMetadata(decision, correlationId), provider: target.provider.id, model: target.model },
            'routed',
          );
          routed = true;
        }
        if (!tokenised && counts.count > 0) {
          await deps.audit.tokenised(actor, {
            count: counts.count,
            categories: counts.categories,
            provider: target.provider.id,
            model: target.model,
            correlation_id: correlationId,
          });
          tokenised = true;
        }
      } finally {
        await beginning;
      }
    };
    const settle = (change: Partial<TrafficDecision>): Promise<void> =>
      begun
        ? deps.traffic
            .settle(record.id, { ...change, finished_at: deps.clock.now().toISOString() }, written)
            .catch((err: unknown) => warn({ err }, 'could not settle a gateway decision'))
        : Promise.resolve();
    const finalCounts = () => {
      const counts = vault.tokenised();
      return { count: counts.count, categories: counts.categories, tokenised };
    };
    return {
      model: { ...target, provider: tokenisingProvider(target.provider, vault, beforeCall) },
      piiTokenized: () => tokenised,
      async completed() {
        const restored = vault.restored();
        // The answer is paid for and hydrated: a failed write loses its entry (the coverage figure then
        // shows the request as never hydrated), not the answer.
        // Both writes at once: one group commit of the embedded store, not two.
        await Promise.all([
          tokenised
            ? deps.audit
                .hydrated(actor, {
                  count: restored.count,
                  categories: restored.categories,
                  correlation_id: correlationId,
                })
                .catch((err: unknown) =>
                  warn({ err, correlation_id: correlationId }, 'could not record gateway.pii.hydrated'),
                )
            : undefined,
          settle({ ...finalCounts(), outcome: 'ok', hydrated: tokenised, restored: restored.count }),
        ]);
      },
      failed: (cancelled) => settle({ ...finalCounts(), outcome: cancelled ? 'cancelled' : 'failed' }),
    };
  }

  return { open };
}

/** The gateway turned off (`[gateway] enabled = false`): the default model as it is, nothing recorded. */
function passthrough(model: ResolvedModel): GatewaySession {
  return {
    model,
    piiTokenized: () => false,
    completed: async () => undefined,
    failed: async () => undefined,
  };
}

function routingMetadata(decision: RouteDecision, correlationId: string): RoutingMetadata {
  return {
    ...(decision.pii_detected === null
      ? {}
      : { pii_detected: decision.pii_detected, pii_categories: decision.pii_categories }),
    local_eligible: decision.local_eligible,
    forced_local: decision.forced_local,
    rerouted: decision.rerouted,
    requested_provider: decision.requested_provider,
    requested_model: decision.requested_model,
    provider: null,
    model: null,
    correlation_id: correlationId,
  };
}

function newDecision(
  clock: Clock,
  request: GatewayRequest,
  actor: PrivacyActor,
  decision: RouteDecision,
): TrafficDecision {
  const target = decision.target_key === null ? null : parseModelKey(decision.target_key);
  const at = clock.now();
  return {
    id: timeOrderedUuid(at.getTime()),
    at: at.toISOString(),
    finished_at: null,
    correlation_id: request.correlation_id,
    agent_id: request.agent_id,
    identity: actor.identity,
    requested_provider: decision.requested_provider,
    requested_model: decision.requested_model,
    provider: target?.provider ?? null,
    model: target?.model ?? null,
    pii_detected: decision.pii_detected,
    categories: {},
    count: 0,
    local_eligible: decision.local_eligible,
    forced_local: decision.forced_local,
    rerouted: decision.rerouted,
    tokenised: false,
    hydrated: false,
    restored: 0,
    outcome: 'pending',
  };
}
