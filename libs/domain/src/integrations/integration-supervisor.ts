import type { IntegrationStatus, PlatformConfig } from '@agent-platform/contracts';
import type { Clock } from '../time/clock.ts';
import type {
  IntegrationConnection,
  IntegrationConnector,
  IntegrationSpec,
} from './integration-connector.ts';
import type { IntegrationTool } from './integration-tools.ts';

/** One integration's connection on one node, kept up: restarted with backoff whenever it fails. */
export interface IntegrationSupervisor {
  readonly generation: number;
  /** What the connection was built from (version and payload): a change means restart. */
  readonly fingerprint: string;
  /** Null until the first attempt has an outcome. */
  status(): IntegrationStatus | null;
  /** Resolves once the first attempt has an outcome (Running, or an error), or the supervisor stopped. */
  readonly firstAttempt: Promise<void>;
  tools(): IntegrationTool[];
  /** The working connection, or null while (re)starting. */
  connection(): IntegrationConnection | null;
  /** Liveness check (MCP ping) of a running connection; a failure restarts it. */
  check(): Promise<void>;
  /** Closes the connection (the server process ends) and stops restarting; waits for both. */
  stop(): Promise<void>;
}

export interface SupervisorOptions {
  integrationId: string;
  generation: number;
  fingerprint: string;
  /** Builds the spec for each attempt (the key is read from the vault each time: a rotated key applies at the next start). */
  spec: () => Promise<IntegrationSpec>;
  connector: IntegrationConnector;
  settings: () => PlatformConfig['integrations'];
  /** Every status change (Running with its tools, or an error while restarting). */
  report: (status: IntegrationStatus, tools: IntegrationTool[]) => Promise<void>;
  log: (level: 'info' | 'warn', context: Record<string, unknown>, message: string) => void;
  clock: Clock;
}

/** A connection that stayed up this long resets the backoff to its first step. */
const STABLE_MS = 10_000;

export function startSupervisor(options: SupervisorOptions): IntegrationSupervisor {
  const { integrationId: id, settings } = options;
  let status: IntegrationStatus | null = null;
  let tools: IntegrationTool[] = [];
  let current: IntegrationConnection | null = null;
  let stopped = false;
  let wakeStop: () => void = () => undefined;
  const stopSignal = new Promise<'stop'>((resolve) => (wakeStop = () => resolve('stop')));
  let dropCurrent: (reason: string) => void = () => undefined;
  let attempted: () => void = () => undefined;
  const firstAttempt = new Promise<void>((resolve) => (attempted = resolve));

  const set = async (next: IntegrationStatus, nextTools: IntegrationTool[]): Promise<void> => {
    status = next;
    tools = nextTools;
    attempted();
    if (!stopped) await options.report(next, nextTools);
  };

  /** When the last connection became Running (null before the first): how long it stayed up decides the backoff. */
  let runningSince: number | null = null;
  const now = (): number => options.clock.now().getTime();

  const runOnce = async (): Promise<void> => {
    const timeoutMs = settings().connect_timeout_secs * 1000;
    const connection = await options.connector.open(await options.spec(), { timeoutMs });
    let listed: IntegrationTool[];
    try {
      listed = await connection.listTools(timeoutMs);
    } catch (error) {
      await connection.close();
      throw error;
    }
    if (stopped) {
      await connection.close();
      return;
    }
    const dropped = new Promise<string>((resolve) => (dropCurrent = resolve));
    current = connection;
    runningSince = now();
    await set('Running', listed);
    options.log('info', { integration_id: id, tools: listed.length }, 'integration connected');
    const outcome = await Promise.race([connection.lost, dropped, stopSignal]);
    current = null;
    await connection.close();
    if (outcome !== 'stop') throw new Error(outcome);
  };

  const loop = (async () => {
    let failures = 0;
    while (!stopped) {
      runningSince = null;
      try {
        await runOnce();
      } catch (error) {
        if (stopped) break;
        const message = error instanceof Error ? error.message : String(error);
        if (runningSince !== null && now() - runningSince >= STABLE_MS) failures = 0;
        failures += 1;
        const waitMs = Math.min(
          settings().restart_backoff_ms * 2 ** (failures - 1),
          settings().restart_max_backoff_ms,
        );
        await set(
          { Error: `${message} (restarting in ${Math.ceil(waitMs / 100) / 10} s, attempt ${failures})` },
          [],
        );
        options.log(
          'warn',
          { integration_id: id, attempt: failures, wait_ms: waitMs, reason: message },
          'integration server failed; restarting with backoff',
        );
        await Promise.race([new Promise((resolve) => setTimeout(resolve, waitMs)), stopSignal]);
      }
    }
  })();

  return {
    generation: options.generation,
    fingerprint: options.fingerprint,
    status: () => status,
    firstAttempt,
    tools: () => tools,
    connection: () => current,
    async check() {
      const connection = current;
      if (connection === null) return;
      const timeoutMs = Math.min(settings().call_timeout_secs, 10) * 1000;
      try {
        await connection.ping(timeoutMs);
      } catch (error) {
        if (current === connection)
          dropCurrent(
            `the server did not answer a ping within ${timeoutMs / 1000} s (${(error as Error).message})`,
          );
      }
    },
    async stop() {
      stopped = true;
      wakeStop();
      attempted();
      await loop;
    },
  };
}
