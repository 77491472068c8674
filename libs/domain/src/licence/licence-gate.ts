import type { LicenceStatus } from '@agent-platform/contracts';
import type { CounterOnce, Store } from '@agent-platform/store';
import { Errors } from '../errors/errors.ts';
import type { PlatformError } from '../errors/platform-error.ts';
import type { EventPublisher } from '../events/event-publisher.ts';
import { emitBudgetCrossings } from './budget-crossings.ts';
import type { Clock } from '../time/clock.ts';
import {
  EMPTY_LICENCE_USAGE,
  fromMicroUsd,
  isLicenceExpired,
  isProviderAllowed,
  LOCAL_PROVIDER_ID,
  toMicroUsd,
  type Licence,
  type LicenceState,
  type LicenceUsage,
} from './licence.ts';
import { licenceCounterKeys, readLicenceUsage, type LicenceCounterKeys } from './licence-counters.ts';
import { licenceStatus } from './licence-status.ts';

/** One model invocation about to be made. */
export interface LicenceRequest {
  /** The provider the call goes to (`local`, `openai`, ...). */
  provider_id: string;
  /** The workflow type the call serves; absent for a call outside any workflow type (no transaction). */
  workflow_type?: string;
  /**
   * Reserves the transaction as an idempotent add under this id (Counters.add `once`), so that
   * whoever settles the call (the process running it, or one that gave up on it) gives it back
   * exactly once with `Counters.withdraw` (invocation-fences.ts). A hold withdrawn before the
   * reservation refuses it: an "invocation cancelled" error, nothing reserved.
   */
  hold?: CounterOnce;
}

/**
 * A transaction held for one authorized invocation. Settle it exactly once: `commit` after the
 * provider answered, `release` when the call failed (a failed call is not counted, DECISIONS D3).
 * The first settle wins; later calls are no-ops, so a `release()` in a `finally` after a
 * `commit()` is harmless.
 */
export interface Reservation {
  /** Keeps the transaction and records what the call cost (USD, from the provider's usage). */
  commit(outcome: { cost_usd: number }): Promise<void>;
  /** Gives the transaction back (with a hold: withdraws it, a no-op when someone already did). */
  release(): Promise<void>;
  /**
   * Settles without a write: someone else gave the transaction back (the requester that abandoned
   * the invocation, invocation-fences.ts).
   */
  disown(): void;
  /** The counter holding the reserved transaction; null for a call outside any workflow type. */
  readonly transaction: string | null;
}

/**
 * The licence check every model invocation passes before it reaches a provider (DECISIONS D3,
 * D6). Refusals are `PermissionDenied` naming the licence or the budget, with `details.reason`
 * one of `no_licence`, `licence_expired`, `provider_not_licensed`,
 * `transaction_budget_exhausted`, `provider_budget_exhausted`, `cloud_spend_exhausted`.
 */
export interface LicenceGate {
  /** Refuses, or reserves the call's transaction and returns the reservation to settle. */
  authorize(request: LicenceRequest): Promise<Reservation>;
  /**
   * A workflow run's transaction (docs/workflows.md "Licence"): the same checks as `authorize`
   * for the provider its steps will use, then one transaction of `workflow_type` reserved for the
   * whole run. Returns the counter holding it, which the run stores so that any process can give
   * it back (`releaseRun`) if the run fails; the steps' own calls then take no transaction.
   */
  reserveRun(request: LicenceRequest & { workflow_type: string }): Promise<string>;
  /**
   * Gives back the transaction `reserveRun` took (a run that failed is not counted, D3): a run
   * still `reserving` withdraws its hold (exactly once, and the reservation is never made if it was
   * not yet); a `held` one gives its counter back directly (its finalization runs once).
   */
  releaseRun(transaction: { state: string; counter_key?: string; hold?: CounterOnce }): Promise<void>;
  /** Usage of the held licence in its current period; empty without a licence. */
  usage(): Promise<LicenceUsage>;
  /** GET /licence/status for the held licence, read from one snapshot of the state. */
  status(): Promise<LicenceStatus>;
}

export interface LicenceGateDeps {
  store: Store;
  clock: Clock;
  /** The licence held now; re-read on every call so that a reload applies to the next one. */
  state: () => LicenceState;
  /** Where the budget events at 80 % and 100 % go (docs/events.md); absent: nowhere. */
  events?: EventPublisher;
}

/**
 * Enforcement order: licence present, not expired, provider allowed, spend budgets not used up,
 * then the transaction is reserved. The reservation comes last so that a call refused for any
 * other reason holds no transaction. It is one atomic `counters.add(key, 1, {limit})`, so any
 * number of parallel invocations, on any number of nodes sharing the store, never take more
 * transactions than the budget.
 *
 * Spend is known only once the provider answered, so it cannot be reserved: `commit` records the
 * actual cost without a limit, and a spend budget refuses the NEXT call once spent >= budget. The
 * overshoot is bounded by the cost of the calls already in flight when the budget ran out.
 */
export function createLicenceGate(deps: LicenceGateDeps): LicenceGate {
  const { counters } = deps.store;

  const settleOnce = (keys: LicenceCounterKeys, request: LicenceRequest, reserved: string | null): Reservation => {
    let settled: Promise<void> | null = null;
    return {
      commit: (outcome) => (settled ??= recordSpend(keys, request.provider_id, outcome.cost_usd)),
      release: () => (settled ??= reserved === null ? Promise.resolve() : giveBack(reserved, request.hold)),
      disown: () => void (settled ??= Promise.resolve()),
      transaction: reserved,
    };
  };

  const giveBack = async (reserved: string, hold: CounterOnce | undefined): Promise<void> => {
    if (hold === undefined) await counters.add(reserved, -1);
    else await counters.withdraw(hold);
  };

  const recordSpend = async (keys: LicenceCounterKeys, providerId: string, costUsd: number): Promise<void> => {
    if (!Number.isFinite(costUsd) || costUsd < 0) throw new RangeError(`licence: cost_usd must be a finite number >= 0, got ${String(costUsd)}`);
    const micro = toMicroUsd(costUsd);
    if (micro === 0) return;
    const provider = await counters.add(keys.providerSpend(providerId), micro);
    const cloud = providerId === LOCAL_PROVIDER_ID ? null : await counters.add(keys.cloudSpend, micro);
    await spendCrossings(keys, providerId, micro, provider.value, cloud?.value ?? null).catch(() => undefined);
  };

  /** The spend budget events (the spend is recorded either way). */
  const spendCrossings = async (keys: LicenceCounterKeys, providerId: string, micro: number, provider: number, cloud: number | null): Promise<void> => {
    const state = deps.state();
    if (deps.events === undefined || state.kind !== 'loaded') return;
    const { licence } = state;
    const common = { scale: 1_000_000, period_start: licence.period_start };
    const entitlement = licence.provider_entitlements?.find((e) => e.provider_id === providerId);
    if (entitlement !== undefined && entitlement.budget_usd !== null) {
      const key = keys.providerSpend(providerId);
      await emitBudgetCrossings(counters, deps.events, { ...common, key, budget: `spend:provider:${providerId}`, before: provider - micro, after: provider, limit: toMicroUsd(entitlement.budget_usd) });
    }
    if (cloud !== null && licence.cloud_spend_usd !== undefined && licence.cloud_spend_usd !== null) {
      await emitBudgetCrossings(counters, deps.events, { ...common, key: keys.cloudSpend, budget: 'spend:cloud', before: cloud - micro, after: cloud, limit: toMicroUsd(licence.cloud_spend_usd) });
    }
  };

  const usageOf = (state: LicenceState): Promise<LicenceUsage> =>
    state.kind === 'loaded' ? readLicenceUsage(counters, state.licence) : Promise.resolve(EMPTY_LICENCE_USAGE);

  /** Every check before the transaction; returns the licence's counter keys and what was reserved. */
  const admit = async (request: LicenceRequest, repeated: Repeated = 'refused'): Promise<{ keys: LicenceCounterKeys; reserved: string | null }> => {
    const state = deps.state();
    if (state.kind === 'none') {
      throw Errors.permissionDenied(`model invocation refused: no valid licence is loaded (${state.reason})`, { reason: 'no_licence' });
    }
    const { licence } = state;
    const keys = licenceCounterKeys(licence);
    const refusal = checkLicence(licence, request, deps.clock.now()) ?? (await checkSpend(licence, keys, request, counters));
    if (refusal !== null) throw refusal;
    return { keys, reserved: await reserveTransaction(licence, keys, request, counters, deps.events, repeated) };
  };

  return {
    async authorize(request) {
      const { keys, reserved } = await admit(request);
      return settleOnce(keys, request, reserved);
    },
    async reserveRun(request) {
      // A run's hold is reserved again by whoever moves a run on that its starter left
      // `reserving` (run-reservation.ts): a repeated add is that run's reservation, not a refusal.
      const { reserved } = await admit(request, 'reserved');
      if (reserved === null) throw new TypeError('reserveRun needs a workflow_type');
      return reserved;
    },
    async releaseRun({ state, counter_key, hold }) {
      if (state === 'reserving' && hold !== undefined) await counters.withdraw(hold);
      else if (state === 'held' && counter_key !== undefined) await counters.add(counter_key, -1);
    },
    usage: () => usageOf(deps.state()),
    async status() {
      const state = deps.state();
      return licenceStatus(state, await usageOf(state), deps.clock.now());
    },
  };
}

function checkLicence(licence: Licence, request: LicenceRequest, now: Date): PlatformError | null {
  if (isLicenceExpired(licence, now)) {
    const expiresAt = new Date(licence.exp * 1000).toISOString();
    return Errors.permissionDenied(`model invocation refused: the licence of ${licence.carrier_name} (${licence.carrier_id}) expired at ${expiresAt}`, {
      reason: 'licence_expired',
      expires_at: expiresAt,
    });
  }
  if (!isProviderAllowed(licence, request.provider_id)) {
    return Errors.permissionDenied(`model invocation refused: the licence does not allow provider '${request.provider_id}'`, {
      reason: 'provider_not_licensed',
      provider_id: request.provider_id,
    });
  }
  return null;
}

async function checkSpend(
  licence: Licence,
  keys: LicenceCounterKeys,
  request: LicenceRequest,
  counters: Store['counters'],
): Promise<PlatformError | null> {
  const { provider_id } = request;
  const entitlement = licence.provider_entitlements?.find((e) => e.provider_id === provider_id);
  if (entitlement !== undefined && entitlement.budget_usd !== null) {
    const spent = await counters.get(keys.providerSpend(provider_id));
    if (spent >= toMicroUsd(entitlement.budget_usd)) {
      return Errors.permissionDenied(
        `model invocation refused: the licence's spend budget for provider '${provider_id}' (${entitlement.budget_usd} USD) is used up until ${licence.period_end}`,
        { reason: 'provider_budget_exhausted', provider_id, budget_usd: entitlement.budget_usd, spent_usd: fromMicroUsd(spent) },
      );
    }
  }
  const cloudBudget = licence.cloud_spend_usd;
  if (provider_id !== LOCAL_PROVIDER_ID && cloudBudget !== undefined && cloudBudget !== null) {
    const spent = await counters.get(keys.cloudSpend);
    if (spent >= toMicroUsd(cloudBudget)) {
      return Errors.permissionDenied(
        `model invocation refused: the licence's cloud spend budget (${cloudBudget} USD) is used up until ${licence.period_end}`,
        { reason: 'cloud_spend_exhausted', budget_usd: cloudBudget, spent_usd: fromMicroUsd(spent) },
      );
    }
  }
  return null;
}

/**
 * What an add under a hold that was used before means: `refused` for an invocation (its requester
 * withdrew the hold), `reserved` for a run (an earlier attempt reserved it).
 */
type Repeated = 'refused' | 'reserved';

/** Returns the counter key reserved, or null for a call outside any workflow type. */
async function reserveTransaction(
  licence: Licence,
  keys: LicenceCounterKeys,
  request: LicenceRequest,
  counters: Store['counters'],
  events: EventPublisher | undefined,
  repeatedMeans: Repeated,
): Promise<string | null> {
  const type = request.workflow_type;
  if (type === undefined) return null;
  const key = keys.transactions(type);
  // Uncapped types are counted too, so that their usage shows in the status.
  const budget = licence.transaction_budgets?.[type] ?? null;
  const { applied, value, repeated } = await counters.add(key, 1, {
    ...(budget === null ? {} : { limit: budget }),
    ...(request.hold === undefined ? {} : { once: request.hold }),
  });
  if (repeated === true) {
    if (repeatedMeans === 'reserved') return key;
    throw Errors.invocationCancelled(`model invocation refused: its transaction hold '${request.hold?.id}' was withdrawn (its requester gave up on it); nothing was charged`);
  }
  if (applied && budget !== null) {
    const move = { key, budget: `transactions:${type}`, before: value - 1, after: value, limit: budget, scale: 1, period_start: licence.period_start };
    await emitBudgetCrossings(counters, events, move).catch(() => undefined);
  }
  if (!applied) {
    throw Errors.permissionDenied(
      `model invocation refused: the licence's transaction budget for workflow type '${type}' (${budget}) is used up until ${licence.period_end}`,
      { reason: 'transaction_budget_exhausted', workflow_type: type, budget },
    );
  }
  return key;
}
