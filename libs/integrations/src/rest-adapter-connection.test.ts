import { describe, expect, it } from 'vitest';
import { buildRequest } from './rest-adapter-connection.ts';
import { serverEnv } from './stdio-env.ts';

const base = new URL('https://claims.example.com/api/');

describe('a REST adapter request', () => {
  it('fills path placeholders (encoded) and sends the rest as the query for GET and DELETE', () => {
    const built = buildRequest(
      base,
      { name: 'get', method: 'GET', path: '/policies/{id}/claims' },
      { id: 'P/1 2', status: 'open', limit: 5, filter: { a: 1 } },
    );
    expect(typeof built === 'object' && built.url.href).toBe(
      'https://claims.example.com/api/policies/P%2F1%202/claims?status=open&limit=5&filter=%7B%22a%22%3A1%7D',
    );
    expect(typeof built === 'object' && built.body).toBeUndefined();
  });

  it('sends the rest as a JSON body for POST, PUT and PATCH', () => {
    const built = buildRequest(
      base,
      { name: 'open', method: 'POST', path: '/policies/{id}/claims' },
      { id: 'P1', amount: 10 },
    );
    expect(built).toEqual({
      url: new URL('https://claims.example.com/api/policies/P1/claims'),
      body: '{"amount":10}',
    });
  });

  it('names missing path arguments', () => {
    expect(buildRequest(base, { name: 'get', method: 'GET', path: '/a/{x}/b/{y}' }, { x: '' })).toBe(
      'missing argument(s) for the path /a/{x}/b/{y}: x, y',
    );
  });
});

describe("a stdio server's environment", () => {
  it('is the platform env minus secrets, plus the package env, plus INTEGRATION_KEY set last', () => {
    const env = serverEnv({
      platformEnv: {
        PATH: '/bin',
        HOME: '/h',
        AP_VAULT_KEY: 'v',
        MY_VAULT: 'x',
        OPENAI_API_KEY: 'sk',
        GITHUB_TOKEN: 't',
        DB_PASSWORD: 'p',
        AWS_SECRET_ACCESS_KEY: 's',
        INTEGRATION_KEY: 'leak',
      },
      secretNames: ['MY_VAULT'],
      packageEnv: { CLAIMS_URL: 'https://c', INTEGRATION_KEY: 'package-cannot-set-it' },
      key: 'the-key',
    });
    expect(env).toEqual({ PATH: '/bin', HOME: '/h', CLAIMS_URL: 'https://c', INTEGRATION_KEY: 'the-key' });
    expect(
      serverEnv({ platformEnv: { INTEGRATION_KEY: 'leak' }, secretNames: [], packageEnv: {}, key: null }),
    ).toEqual({});
  });
});
