import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { agreeWithFleetAtBoot, createConfigHolder, loadVaultKey, vaultKeyClaim, type ConfigHolder, type LoadedConfig } from '@agent-platform/config';
import { channelConfigOpener, createChannelBridge, createChannelKinds, type ChannelBridge, type ChannelKind, type ChannelRecord } from '@agent-platform/channels';
import type { ChannelConfig } from '@agent-platform/channels';
import type { Bus } from '@agent-platform/bus';
import type { Clock } from '@agent-platform/domain';
import { openProcess, type ComposeContext, type ComposeOptions, type ComposedProcess } from '@agent-platform/engines';
import { guardedFetch } from '@agent-platform/net';
import { createMetrics, platformInstruments, type Logger, type PlatformMetrics } from '@agent-platform/observability';
import type { Store } from '@agent-platform/store';
import { createChannelBridgeService } from './service.ts';

export interface BridgeSources {
  config: Pick<ConfigHolder, 'current'>;
  store: Store;
  bus: Bus;
  clock: Clock;
  logger: Logger;
  openConfig: (record: ChannelRecord) => ChannelConfig;
  kinds?: readonly ChannelKind[];
  /** This process's metrics (`channel_messages_total{direction="out"}`); absent: not counted. */
  metrics?: PlatformMetrics;
}

/** The bridge runtime over a process's engines (the bridge alone, or the all-in-one). */
export function composeBridge(sources: BridgeSources): ChannelBridge {
  const allow = (): boolean => sources.config.current().network.allow_private_targets;
  const channels = sources.config.current().channels;
  return createChannelBridge({
    store: sources.store,
    bus: sources.bus,
    clock: sources.clock,
    logger: sources.logger,
    kinds: createChannelKinds(sources.kinds),
    openConfig: sources.openConfig,
    bridgeId: `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
    fetch: guardedFetch(allow),
    allowPrivateTargets: allow,
    leaseTtlMs: channels.lease_ttl_secs * 1000,
    reconnectBackoffMs: channels.reconnect_backoff_ms,
    reconnectMaxBackoffMs: channels.reconnect_max_backoff_ms,
    ...(sources.metrics === undefined ? {} : { onSent: instrumentSends(sources.metrics) }),
  });
}

function instrumentSends(metrics: PlatformMetrics): (kind: string, outcome: 'sent' | 'failed') => void {
  const instruments = platformInstruments(metrics);
  return (kind, outcome) => instruments.channelMessageSent(kind, outcome);
}

/**
 * The channel bridge running alone (a fleet member): its engines from `[runtime]`, the vault key
 * (secret channel config is sealed with it: every node needs the same key), and the bridge
 * runtime over them.
 */
export async function composeChannelBridge(loaded: LoadedConfig, context: ComposeContext, options: ComposeOptions = {}): Promise<ComposedProcess> {
  const config = createConfigHolder(loaded, { env: context.env, cwd: context.cwd });
  const boot = config.current();
  const { clock, logger, engines } = await openProcess(boot, context, options);
  try {
    const vaultKey = await loadVaultKey({ dataDir: boot.storage.data_dir, env: context.env, envName: boot.vault.key_env });
    // Every node must hold the fleet's vault key: one that differs refuses to start (docs/scale-out.md).
    await agreeWithFleetAtBoot([vaultKeyClaim(vaultKey, boot.vault.key_env)], {
      store: engines.store,
      env: context.env,
      processName: context.name,
      now: () => clock.now(),
      log: logger,
    });
    const metrics = createMetrics();
    const bridge = composeBridge({ config, store: engines.store, bus: engines.bus, clock, logger, openConfig: channelConfigOpener(vaultKey, createChannelKinds()), metrics });
    return { logger, services: [createChannelBridgeService({ logger, bridge })], close: () => engines.close(), reload: async () => void (await config.reload()), metrics };
  } catch (error) {
    await engines.close();
    throw error;
  }
}
