import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeRoutes } from '../testing/probe-routes.ts';
import { startTestApi, type TestApi } from '../testing/index.ts';

/**
 * The spec's precedence rules, each pinned: 401 before routing (§Authentication rule 1), flat 403
 * before 415/422 for an unauthorized caller ("Rules of the model" 5, §Errors case rule 3), then
 * 415, 422 and 400 for an authorized one.
 */
let api: TestApi;
let admin: string;
let viewer: string;
const VALID = '00000000-0000-4000-8000-000000000001';

beforeAll(async () => {
  api = await startTestApi({ config: { auth: { mode: 'local' } }, routes: [probeRoutes()] });
  admin = await api.issueKey('admin');
  viewer = await api.issueKey('viewer');
});
afterAll(async () => api.close());

describe('authentication comes before routing', () => {
  it('answers an unknown path without a token with 401, not 404', async () => {
    const res = await api.request('GET', '/no/such/route');
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect(res.body).toEqual({ error: { category: 'AuthError', message: expect.stringContaining('Bearer') } });
  });

  it('answers an unknown path with a valid token with 404 NotFound', async () => {
    const res = await api.request('GET', '/no/such/route', { token: viewer });
    expect(res.status).toBe(404);
    expect(res.body.error.category).toBe('NotFound');
  });

  it('refuses an invalid token with 401 and never echoes it', async () => {
    const res = await api.request('GET', '/probe/agents/' + VALID, { token: 'svc_sk_not-a-real-key' });
    expect(res.status).toBe(401);
    expect(JSON.stringify(res.body)).not.toContain('not-a-real-key');
  });
});

describe('an unauthorized caller sees the flat 403 before any body error', () => {
  const forbidden = { error: 'forbidden', message: 'role viewer may not perform AgentInvoke' };

  it('403, not 415, for a text/plain body', async () => {
    const res = await api.request('POST', '/probe/echo', { token: viewer, body: 'hello', headers: { 'content-type': 'text/plain' } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(forbidden);
  });

  it('403, not 422, for malformed JSON', async () => {
    const res = await api.request('POST', '/probe/echo', { token: viewer, body: '{"message":', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(forbidden);
  });

  it('403, not 422 or 400, for a body of the wrong shape', async () => {
    expect((await api.request('POST', '/probe/echo', { token: viewer, body: { message: 5 } })).status).toBe(403);
    expect((await api.request('POST', '/probe/echo', { token: viewer, body: {} })).status).toBe(403);
  });
});

describe('body checks for an authorized caller', () => {
  it('415 UnsupportedMediaType for text/plain', async () => {
    const res = await api.request('POST', '/probe/echo', { token: admin, body: 'hello', headers: { 'content-type': 'text/plain' } });
    expect(res.status).toBe(415);
    expect(res.body.error.category).toBe('UnsupportedMediaType');
    expect(res.body.error.message).toContain('text/plain');
  });

  it('accepts application/json with a charset; a body with no Content-Type is 415', async () => {
    const charset = await api.request('POST', '/probe/echo', {
      token: admin,
      body: '{"message":"hi"}',
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(charset).toMatchObject({ status: 200, body: { message: 'hi' } });
    const bare = await api.request('POST', '/probe/echo', { token: admin, body: '{"message":"bare"}' });
    expect(bare).toMatchObject({ status: 415, body: { error: { category: 'UnsupportedMediaType' } } });
  });

  it('422 MalformedBody for invalid JSON', async () => {
    const res = await api.request('POST', '/probe/echo', { token: admin, body: '{"message":', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(422);
    expect(res.body.error.category).toBe('MalformedBody');
  });

  it('422 MalformedBody naming a field of the wrong JSON type', async () => {
    const res = await api.request('POST', '/probe/echo', { token: admin, body: { message: 5 } });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ category: 'MalformedBody', message: "field 'message' must be string" });
  });

  it('422 for a wrong type inside a union of literals too', async () => {
    const res = await api.request('POST', '/probe/echo', { token: admin, body: { message: 'x', mode: 3 } });
    expect(res.status).toBe(422);
    expect(res.body.error.message).toContain("'mode'");
  });

  it('400 ValidationError naming a missing field', async () => {
    const res = await api.request('POST', '/probe/echo', { token: admin, body: {} });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ category: 'ValidationError', message: "missing required field 'message'" });
  });

  it('400 for enum, bounds and unknown fields, each naming the field', async () => {
    const cases: Array<[unknown, string]> = [
      [{ message: 'x', mode: 'medium' }, "field 'mode' must be one of: fast, slow"],
      [{ message: 'x', count: -1 }, "field 'count'"],
      [{ message: '' }, "field 'message'"],
      [{ message: 'x', extra: true }, "unknown field 'extra'"],
    ];
    for (const [body, message] of cases) {
      const res = await api.request('POST', '/probe/echo', { token: admin, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.category).toBe('ValidationError');
      expect(res.body.error.message).toContain(message);
    }
  });

  it('400 for a body that is required but absent', async () => {
    const res = await api.request('POST', '/probe/echo', { token: admin });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('request body is required');
  });

  it('accepts no body at all where the body schema has no required field', async () => {
    const res = await api.request('POST', '/probe/optional', { token: admin });
    expect(res).toMatchObject({ status: 200, body: { note: '(none)' } });
  });
});

describe('path ids', () => {
  it('400 naming the id kind for a non-UUID id, before schema validation', async () => {
    const res = await api.request('GET', '/probe/agents/not-a-uuid', { token: viewer });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ category: 'ValidationError', message: expect.stringContaining('invalid agent id') });
  });

  it('passes a UUID through', async () => {
    expect((await api.request('GET', `/probe/agents/${VALID}`, { token: viewer })).body).toEqual({ id: VALID });
  });
});
