import { ConfigError } from '@agent-platform/config';
import type { PlatformConfig } from '@agent-platform/contracts';
import { platformVersion } from './platform-version.ts';

/** The tracing of one process: started before its engines open, stopped after they close. */
export interface ProcessTelemetry {
  /** True when `[telemetry] otlp_endpoint` is set and the SDK is registered. */
  readonly tracing: boolean;
  /** Where export failures are reported once the process has its logger (stderr before). */
  report(sink: (message: string) => void): void;
  /** Exports the spans still buffered (a few seconds at most), then stops. */
  shutdown(): Promise<void>;
}

const OFF: ProcessTelemetry = { tracing: false, report: () => undefined, shutdown: async () => undefined };

/**
 * Starts tracing for a process from `[telemetry]` (docs/observability.md): nothing at all when
 * `otlp_endpoint` is empty (the SDK is not even imported); otherwise the SDK, with `service_name`
 * (default: the process name) and the export headers read from the environment variables
 * `headers_env` names. A variable that is not set refuses the boot, naming it: a collector that
 * needs a token would refuse every export otherwise, silently.
 */
export async function startProcessTelemetry(
  config: PlatformConfig,
  target: { name: string; env: Record<string, string | undefined> },
): Promise<ProcessTelemetry> {
  const settings = config.telemetry;
  if (settings.otlp_endpoint === '') return OFF;
  const headers: Record<string, string> = {};
  const missing: string[] = [];
  for (const [header, envName] of Object.entries(settings.headers_env)) {
    const value = target.env[envName];
    if (value === undefined || value === '')
      missing.push(`telemetry.headers_env.${header}: the environment variable ${envName} is not set`);
    else headers[header] = value;
  }
  if (missing.length > 0) throw new ConfigError(missing);
  let sink = (message: string): void => console.error(`telemetry: ${message}`);
  const { startTelemetry } = await import('@agent-platform/observability/otel');
  const telemetry = startTelemetry({
    endpoint: settings.otlp_endpoint,
    serviceName: settings.service_name === '' ? target.name : settings.service_name,
    serviceVersion: platformVersion(),
    samplingRatio: settings.sampling_ratio,
    headers,
    exportIntervalMs: settings.export_interval_ms,
    onExportError: (message) => sink(message),
  });
  return {
    tracing: true,
    report: (next) => {
      sink = next;
    },
    shutdown: () => telemetry.shutdown(),
  };
}
