import type { PlatformConfig } from '@agent-platform/contracts';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '@agent-platform/testkit';
import type { DeepPartial } from '@agent-platform/api/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { insertAgent, licenceClaims, startPlatformTestApi, type PlatformTestApi } from '../testing/platform-test-api.ts';

// DECISIONS D3/D6: without a valid licence, with an expired one, or over a budget, an invocation
// is refused with 403 PermissionDenied before it reaches any provider, and is not counted.
let api: PlatformTestApi | null = null;
let fake: FakeOpenAiServer;

beforeEach(async () => {
  fake = await startFakeOpenAiServer();
});
afterEach(async () => {
  await api?.close();
  api = null;
  await fake.close();
});

const viaFake = (): DeepPartial<PlatformConfig> => ({
  providers: [{ id: 'oa', kind: 'openai', base_url: fake.url, models: ['gpt-test'] }],
  models: { default: 'oa/gpt-test' },
});

describe('licence gate on invocations', () => {
  it('refuses every invocation without a licence, and no provider hears of it', async () => {
    api = await startPlatformTestApi({ licence: null, config: viaFake() });
    const agent = await insertAgent(api);
    const res = await api.request('POST', `/agents/${agent.id}/send`, { body: { message: 'hi' } });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ category: 'PermissionDenied', message: expect.stringContaining('licence'), details: { reason: 'no_licence' } });
    expect(fake.requests).toHaveLength(0);
    expect((await api.request('GET', '/usage/summary')).body.requests).toBe(0);
  });

  it('refuses every invocation with an expired licence', async () => {
    const now = Math.floor(Date.now() / 1000);
    api = await startPlatformTestApi({ licence: licenceClaims({ iat: now - 40 * 86_400, exp: now - 60 }), config: viaFake() });
    const agent = await insertAgent(api);
    const res = await api.request('POST', `/agents/${agent.id}/invoke`, { body: { source: 'Api', message: 'hi', correlation_id: 'c' } });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ category: 'PermissionDenied', details: { reason: 'licence_expired' } });
    expect(fake.requests).toHaveLength(0);
  });

  it('refuses a provider the licence does not allow', async () => {
    api = await startPlatformTestApi({ licence: licenceClaims({ providers: { local: true, managed_cloud: false } }), config: viaFake() });
    const agent = await insertAgent(api);
    const res = await api.request('POST', `/agents/${agent.id}/send`, { body: { message: 'hi' } });
    expect(res.status).toBe(403);
    expect(res.body.error.details).toMatchObject({ reason: 'provider_not_licensed', provider_id: 'oa' });
    expect(fake.requests).toHaveLength(0);
  });

  it('lets exactly the transaction budget through 50 parallel invocations', async () => {
    api = await startPlatformTestApi({ licence: licenceClaims({ transaction_budgets: { claims_intake: 10 } }) });
    const agent = await insertAgent(api);
    const t = api;
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        t.request('POST', `/agents/${agent.id}/invoke`, {
          body: { source: 'Api', message: `claim ${i}`, correlation_id: `c-${i}`, workflow_type: 'claims_intake' },
        }),
      ),
    );
    expect(replies.filter((r) => r.status === 200)).toHaveLength(10);
    const refused = replies.filter((r) => r.status === 403);
    expect(refused).toHaveLength(40);
    for (const r of refused) expect(r.body.error).toMatchObject({ category: 'PermissionDenied', details: { reason: 'transaction_budget_exhausted' } });
    const status = await api.request('GET', '/licence/status');
    expect(status.body.transaction_utilization.claims_intake).toEqual({ budget: 10, used: 10, remaining: 0 });
    expect((await api.request('GET', '/usage/value-events')).body.by_class.intake).toBe(10);
  });
});
