import { ERROR_CATEGORIES } from '@agent-platform/contracts';
import { ConfigError } from '@agent-platform/config';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toErrorReply } from './error-handler.ts';
import { STATUS } from './error-status.ts';
import { probeRoutes } from '../testing/probe-routes.ts';
import { startTestApi, type TestApi } from '../testing/index.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ routes: [probeRoutes()] });
});
afterAll(async () => api.close());

describe('category -> status (spec §Errors)', () => {
  it('keeps the spec table, odd entries included', () => {
    expect(STATUS).toMatchObject({
      NotFound: 404,
      ValidationError: 400,
      UnsupportedMediaType: 415,
      InvalidState: 500,
      MissingDependency: 500,
      PermissionDenied: 403,
      TrustPolicyViolation: 403,
      Duplicate: 500,
      SizeLimitExceeded: 500,
      Timeout: 500,
      MemoryViolation: 503,
      ProviderError: 502,
      RateLimited: 429,
      DuplicateInvocation: 200,
      AuthenticationError: 500,
      AuthorizationError: 500,
      InitError: 500,
      Internal: 500,
      Conflict: 409,
      AuthError: 401,
      ConfigError: 400,
      MalformedBody: 422,
      RequestTimeout: 408,
    });
  });

  it('answers every category thrown by a handler with its status and the envelope', async () => {
    for (const category of ERROR_CATEGORIES) {
      const res = await api.request('GET', `/probe/fail/${category}`);
      expect(res.status, category).toBe(STATUS[category]);
      expect(res.body, category).toEqual({ error: { category, message: `probe ${category}` } });
    }
  });

  it('adds Retry-After to RateLimited and WWW-Authenticate to AuthError', async () => {
    expect((await api.request('GET', '/probe/fail/RateLimited')).headers['retry-after']).toBe('7');
    expect((await api.request('GET', '/probe/fail/AuthError')).headers['www-authenticate']).toBe('Bearer');
  });

  it('maps a ConfigError from libs/config to 400 with its problems in details', () => {
    const reply = toErrorReply(new ConfigError(['server.listen: bad', 'auth.mode: bad']));
    expect(reply.status).toBe(400);
    expect(reply.body.error).toMatchObject({ category: 'ConfigError', details: { problems: ['server.listen: bad', 'auth.mode: bad'] } });
  });
});

describe('unexpected errors', () => {
  it('are a generic 500 Internal for the client and a full log line for the operator', async () => {
    const res = await api.request('GET', '/probe/fail/unexpected');
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: { category: 'Internal', message: 'internal error' } });
    const line = api.logs().find((l) => l.includes('request failed') && l.includes('database'));
    expect(line).toBeDefined();
    expect(JSON.parse(line!)).toMatchObject({ level: 50, err: { message: expect.stringContaining('database'), stack: expect.any(String) } });
  });

  it('maps an unparseable Content-Type from Fastify to 415 in the envelope', async () => {
    const res = await api.request('POST', '/probe/echo', { body: '{}', headers: { 'content-type': 'not a media type' } });
    expect(res.status).toBe(415);
    expect(res.body.error.category).toBe('UnsupportedMediaType');
  });
});
