import { validateConfig } from '@agent-platform/config';
import { tracingEnabled } from '@agent-platform/observability';
import { describe, expect, it } from 'vitest';
import { startProcessTelemetry } from './process-telemetry.ts';

const config = (telemetry: Record<string, unknown>) =>
  validateConfig({ telemetry }, { baseDir: '/tmp', source: 'test' });

describe('startProcessTelemetry', () => {
  it('does nothing without an endpoint: no SDK, tracing stays off', async () => {
    const telemetry = await startProcessTelemetry(config({}), { name: 'api', env: {} });
    expect(telemetry.tracing).toBe(false);
    expect(tracingEnabled()).toBe(false);
    await telemetry.shutdown();
  });

  it('refuses to start when a header variable is not set, naming the key and the variable', async () => {
    const attempt = startProcessTelemetry(
      config({
        otlp_endpoint: 'http://127.0.0.1:4318/v1/traces',
        headers_env: { authorization: 'OTLP_TOKEN' },
      }),
      {
        name: 'api',
        env: {},
      },
    );
    await expect(attempt).rejects.toThrow(
      'telemetry.headers_env.authorization: the environment variable OTLP_TOKEN is not set',
    );
    expect(tracingEnabled()).toBe(false);
  });
});
