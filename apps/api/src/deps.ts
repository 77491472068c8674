import type { PlatformConfig } from '@agent-platform/contracts';
import type { AuditTrail, AuthBackoff, Clock, KeyService, Vault } from '@agent-platform/domain';
import type { Store } from '@agent-platform/store';
import type { Bus } from '@agent-platform/bus';
import type { Queue } from '@agent-platform/queue';
import type { Logger, LogBuffer, PlatformMetrics } from '@agent-platform/observability';

/** The running config, swapped atomically by POST /config/reload. */
export interface ConfigHolder {
  current(): PlatformConfig;
  /** The file's raw text with secret values redacted, or null when started without a file. */
  redactedText(): string | null;
  /** Re-reads and validates the file; on error throws a ConfigError and keeps the old config. */
  reload(): Promise<{ restart_required: string[] }>;
}

/** Everything the api needs, built by a composition root (apps/api/src/compose.ts or apps/platform). */
export interface ApiDeps {
  config: ConfigHolder;
  version: string;
  clock: Clock;
  logger: Logger;
  logBuffer: LogBuffer;
  metrics: PlatformMetrics;
  store: Store;
  bus: Bus;
  queue: Queue;
  keys: KeyService;
  audit: AuditTrail;
  vault: Vault;
  authBackoff: AuthBackoff;
  /** Called by POST /shutdown after the response is sent; the root stops every service. */
  requestShutdown: () => void;
}
