import { describe, expect, it } from 'vitest';
import { ConfigError } from './config-error.ts';
import { validateConfig } from './validate-config.ts';

const validate = (telemetry: Record<string, unknown>) =>
  validateConfig({ telemetry }, { baseDir: '/tmp', source: 'test' });

function problemsOf(telemetry: Record<string, unknown>): string[] {
  try {
    validate(telemetry);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('[telemetry]', () => {
  it('is off by default: no endpoint, no metrics listener', () => {
    expect(validateConfig({}, { baseDir: '/tmp', source: 'test' }).telemetry).toEqual({
      otlp_endpoint: '',
      service_name: '',
      sampling_ratio: 1,
      headers_env: {},
      export_interval_ms: 5000,
      metrics_listen: '',
    });
  });

  it('accepts a collector URL, a sampling ratio, header variables and a metrics address', () => {
    const telemetry = validate({
      otlp_endpoint: 'https://collector.example.com:4318/v1/traces',
      sampling_ratio: 0.25,
      headers_env: { authorization: 'OTLP_AUTH' },
      metrics_listen: '0.0.0.0:9464',
    }).telemetry;
    expect(telemetry).toMatchObject({
      sampling_ratio: 0.25,
      headers_env: { authorization: 'OTLP_AUTH' },
      metrics_listen: '0.0.0.0:9464',
    });
  });

  it('refuses, naming each key: a non-HTTP endpoint, a ratio above 1, a pasted secret, a bad listen address', () => {
    const problems = problemsOf({
      otlp_endpoint: 'grpc://collector:4317',
      sampling_ratio: 2,
      headers_env: { authorization: 'Bearer abc' },
      metrics_listen: 'nowhere',
    }).join('\n');
    expect(problems).toContain('telemetry.otlp_endpoint');
    expect(problems).toContain('telemetry.sampling_ratio');
    expect(problems).toContain('telemetry.headers_env');
    expect(problems).toContain('telemetry.metrics_listen');
  });
});
