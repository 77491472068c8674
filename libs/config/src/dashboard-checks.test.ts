import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { ConfigError } from './config-error.ts';
import { parseConfigText } from './load-config.ts';

function parse(text: string) {
  return parseConfigText(text, join(tmpdir(), 'agent-platform.toml'));
}

function problemsOf(text: string): string[] {
  try {
    parse(text);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('config was accepted');
}

describe('[dashboard] (docs/dashboard.md)', () => {
  it('defaults to no provider sign-in and no extra origins', () => {
    expect(parse('').dashboard).toEqual({
      oidc_client_id: '',
      oidc_scopes: ['openid'],
      oidc_resource: '',
      connect_origins: [],
    });
  });

  it('accepts origins that are https or loopback http', () => {
    const config = parse(
      '[dashboard]\nconnect_origins = ["https://login.example.com", "http://127.0.0.1:4300", "https://idp.example.com:8443/"]\n',
    );
    expect(config.dashboard.connect_origins).toHaveLength(3);
  });

  it('refuses a connect origin that is not exactly an origin, since it goes into a CSP header', () => {
    const problems = problemsOf(
      '[dashboard]\nconnect_origins = ["https://a.example.com/path", "https://b.example.com; script-src *", "http://idp.example.com", "*"]\n',
    );
    expect(problems).toEqual([
      expect.stringMatching(/^dashboard\.connect_origins\[0\]: .* is not an origin/),
      expect.stringMatching(/^dashboard\.connect_origins\[1\]: .* is not an origin/),
      expect.stringMatching(/^dashboard\.connect_origins\[2\]: .* must be https/),
      expect.stringMatching(/^dashboard\.connect_origins\[3\]: .* is not an origin/),
    ]);
  });

  it('refuses a resource indicator that is not an absolute URI', () => {
    expect(problemsOf('[dashboard]\noidc_resource = "agents"\n')).toEqual([
      expect.stringMatching(/^dashboard\.oidc_resource: .*absolute URI/),
    ]);
    expect(parse('[dashboard]\noidc_resource = "https://agents.example.com"\n').dashboard.oidc_resource).toBe(
      'https://agents.example.com',
    );
  });
});
