import { startTestApi } from '@agent-platform/api/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { insertAgent, parseEventStream, startPlatformTestApi, type PlatformTestApi } from '../testing/platform-test-api.ts';

// POST /agents/{id}/send and /invoke against the built-in `local` model (DECISIONS D6): the api
// hands each invocation to the agent worker over the bus, as the all-in-one platform does.
let api: PlatformTestApi | null = null;
afterEach(async () => {
  await api?.close();
  api = null;
});

/** D6: ceil(len(input)/4) + ceil(len(output)/4), the echo being the input. */
const echoTokens = (text: string): number => 2 * Math.ceil([...text].length / 4);

describe('send', () => {
  it('answers the echo with the D6 token count and counts the task', async () => {
    api = await startPlatformTestApi();
    const agent = await insertAgent(api);
    const message = 'Hello, world! My car was hit in the parking lot.';
    const res = await api.request('POST', `/agents/${agent.id}/send`, { body: { message } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ content: message, tool_calls: [], tokens_used: echoTokens(message) });
    const stats = await api.deps.agentStats.read(agent.id);
    expect(stats).toMatchObject({ tasks_received: 1, tasks_completed: 1, invocation_metrics: { total_count: 1, error_count: 0 } });
    expect(stats.invocation_metrics.by_source.map((row) => row.slice(0, 3))).toEqual([['Api', 1, 0]]);
  });

  it('refuses a Suspended agent with InvalidState naming the state, an unknown one with 404, a bad id with 400', async () => {
    api = await startPlatformTestApi();
    const suspended = await insertAgent(api, { state: 'Suspended' });
    const refused = await api.request('POST', `/agents/${suspended.id}/send`, { body: { message: 'hi' } });
    expect(refused.status).toBe(500);
    expect(refused.body.error).toMatchObject({ category: 'InvalidState', message: expect.stringContaining('Suspended') });

    const unknown = await api.request('POST', '/agents/00000000-0000-4000-8000-000000000000/send', { body: { message: 'hi' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.category).toBe('NotFound');

    const bad = await api.request('POST', '/agents/not-a-uuid/send', { body: { message: 'hi' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ category: 'ValidationError', message: expect.stringContaining('agent') });

    const missing = await api.request('POST', `/agents/${suspended.id}/send`, { body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toContain('message');
  });

  it('streams token events then done with Accept: text/event-stream, and is plain JSON without it', async () => {
    api = await startPlatformTestApi();
    const agent = await insertAgent(api);
    const message = 'Claim 42 is approved for payment';
    const res = await api.request('POST', `/agents/${agent.id}/send`, { body: { message }, headers: { accept: 'text/event-stream' } });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('text/event-stream');
    const events = parseEventStream(res.body as string);
    const tokens = events.filter((e) => e.event === 'token').map((e) => JSON.parse(e.data).text as string);
    expect(tokens.length).toBeGreaterThan(1);
    expect(tokens.join('')).toBe(message);
    expect(events.at(-1)?.event).toBe('done');
    expect(JSON.parse(events.at(-1)!.data)).toEqual({ content: message, tool_calls: [], tokens_used: echoTokens(message) });

    // The stream went through the normal pipeline: audited like any mutating request.
    const audit = await api.request('GET', '/security/audit?limit=5');
    expect(audit.body.entries).toContainEqual(expect.objectContaining({ action: 'POST /agents/:id/send', result: '200' }));

    const plain = await api.request('POST', `/agents/${agent.id}/send`, { body: { message } });
    expect(plain.headers['content-type']).toContain('application/json');
    expect(plain.body).toEqual({ content: message, tool_calls: [], tokens_used: echoTokens(message) });
  });

  it('answers an error before any token with its real status, even when streaming was asked for', async () => {
    api = await startPlatformTestApi({ licence: null });
    const agent = await insertAgent(api);
    const res = await api.request('POST', `/agents/${agent.id}/send`, { body: { message: 'hi' }, headers: { accept: 'text/event-stream' } });
    expect(res.status).toBe(403);
    expect(res.body.error.category).toBe('PermissionDenied');
  });
});

describe('invoke', () => {
  it('answers an InvocationResult echoing the correlation id and the source', async () => {
    api = await startPlatformTestApi();
    const agent = await insertAgent(api);
    const cron = { Cron: { schedule_id: 's-1', expression: '0 * * * *', scheduled_at: '2026-11-10T12:00:00Z' } };
    const res = await api.request('POST', `/agents/${agent.id}/invoke`, {
      body: { source: cron, message: 'nightly check', correlation_id: 'corr-7' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      content: 'nightly check',
      tokens_used: echoTokens('nightly check'),
      duration_ms: expect.any(Number),
      correlation_id: 'corr-7',
      source: cron,
    });
    const api2 = await api.request('POST', `/agents/${agent.id}/invoke`, { body: { source: 'Api', message: 'x', correlation_id: 'c' } });
    expect(api2.body.source).toBe('Api');
    const rows = (await api.deps.agentStats.read(agent.id)).invocation_metrics.by_source.map((row) => row.slice(0, 2));
    expect(rows).toEqual([
      ['Api', 1],
      ['Cron', 1],
    ]);
  });

  it('validates the InvocationContext', async () => {
    api = await startPlatformTestApi();
    const agent = await insertAgent(api);
    const path = `/agents/${agent.id}/invoke`;
    const noCorrelation = await api.request('POST', path, { body: { source: 'Api', message: 'x' } });
    expect(noCorrelation.status).toBe(400);
    expect(noCorrelation.body.error.message).toContain('correlation_id');
    const badSource = await api.request('POST', path, { body: { source: 'Email', message: 'x', correlation_id: 'c' } });
    expect(badSource.status).toBe(400);
    const unknownField = await api.request('POST', path, { body: { source: 'Api', message: 'x', correlation_id: 'c', idempotencykey: 'k' } });
    expect(unknownField.status).toBe(400);
    expect(unknownField.body.error.message).toContain('idempotencykey');
  });
});

describe('without an agent worker', () => {
  it('says that no agent worker is running', async () => {
    const alone = await startTestApi();
    try {
      const agent = await insertAgent(alone);
      const res = await alone.request('POST', `/agents/${agent.id}/send`, { body: { message: 'hi' } });
      expect(res.status).toBe(500);
      expect(res.body.error).toEqual({ category: 'Internal', message: expect.stringContaining('no agent worker is running') });
    } finally {
      await alone.close();
    }
  });
});
