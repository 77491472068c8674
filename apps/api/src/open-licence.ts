import { loadLicence, type ConfigHolder, type LicenceLog } from '@agent-platform/config';
import { createLicenceGate, type Clock, type EventPublisher, type LicenceState } from '@agent-platform/domain';
import type { Store } from '@agent-platform/store';
import type { ApiDeps } from './deps.ts';

/**
 * Loads the licence at boot and again after every successful POST /config/reload (DECISIONS
 * D3), and builds the gate over it. After a reload the licence is whatever the files now say:
 * a licence that no longer verifies replaces the one held, so the platform answers `no_licence`
 * and refuses invocations (logged with the reason) rather than keep trusting files it can no
 * longer check. A reload refused for a bad config file leaves the licence untouched, because
 * listeners only run after a good one.
 */
export async function openLicence(deps: { config: ConfigHolder; store: Store; clock: Clock; log: LicenceLog; events?: EventPublisher }): Promise<ApiDeps['licence']> {
  let state: LicenceState = await loadLicence(deps.config.current(), deps.log);
  deps.config.onChange(async ({ config }) => {
    state = await loadLicence(config, deps.log);
  });
  return { state: () => state, gate: createLicenceGate({ store: deps.store, clock: deps.clock, state: () => state, ...(deps.events === undefined ? {} : { events: deps.events }) }) };
}
