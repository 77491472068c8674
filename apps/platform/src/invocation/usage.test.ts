import { fixedClock } from '@agent-platform/domain';
import { afterEach, describe, expect, it } from 'vitest';
import { insertAgent, licenceClaims, startPlatformTestApi, type PlatformTestApi } from '../testing/platform-test-api.ts';

// GET /usage, /usage/summary, /usage/value-events after a known set of invocations on the
// `local` model, whose tokens are exact (D6: ceil(len/4) each way).
let api: PlatformTestApi | null = null;
afterEach(async () => {
  await api?.close();
  api = null;
});

describe('usage', () => {
  it('reports exact sums, value events by class and solution, and weekly buckets', async () => {
    // One invocation exactly a week ago (the previous weekly bucket), the rest now; the licence
    // period began ten days ago, so /usage covers both.
    const clock = fixedClock(new Date(Date.now()));
    const periodStart = new Date(Date.now() - 10 * 86_400_000).toISOString();
    api = await startPlatformTestApi({ clock, licence: licenceClaims({ period_start: periodStart }) });
    const agent = await insertAgent(api);
    const invoke = (message: string, workflow_type?: string) =>
      api!.request('POST', `/agents/${agent.id}/invoke`, {
        body: { source: 'Api', message, correlation_id: 'c', ...(workflow_type === undefined ? {} : { workflow_type }) },
      });
    const now = clock.now();
    clock.advance(-7 * 86_400_000);
    expect((await invoke('12345678', 'claims_intake')).status).toBe(200); // 2 + 2 tokens
    clock.set(now);
    expect((await invoke('1234', 'claims_intake')).status).toBe(200); // 1 + 1
    expect((await invoke('123456789', 'subrogation')).status).toBe(200); // 3 + 3
    expect((await invoke('12', 'partner_newsletter')).status).toBe(200); // 1 + 1, no class
    expect((await invoke('hello')).status).toBe(200); // 2 + 2, no workflow type: not a value event

    const totals = { total_input_tokens: 9, total_output_tokens: 9, total_requests: 5, total_cost_usd: 0 };
    // Before the licence period began: in the all-time summary only.
    clock.set(new Date(Date.parse(periodStart) - 1000));
    expect((await invoke('abcd')).status).toBe(200); // 1 + 1
    clock.set(now);
    expect((await api.request('GET', '/usage')).body).toEqual(totals);
    expect((await api.request('GET', '/usage/summary')).body).toEqual({ period: 'all_time', input_tokens: 10, output_tokens: 10, requests: 6, cost_usd: 0 });

    const events = await api.request('GET', '/usage/value-events?weeks=2');
    expect(events.status).toBe(200);
    expect(events.body).toMatchObject({
      window_secs: 2_592_000,
      since: new Date(now.getTime() - 2_592_000_000).toISOString(),
      until: now.toISOString(),
      total: 4,
      by_class: { intake: 2, servicing: 0, recovery: 1, underwriting: 0, compliance: 0 },
      by_solution: { claims_intake: 2, subrogation: 1, partner_newsletter: 1 },
    });
    const weekly = events.body.weekly as Array<{ week_start: string; count: number }>;
    expect(weekly.map((w) => w.count)).toEqual([1, 3]);
    for (const week of weekly) expect(new Date(week.week_start).getUTCDay()).toBe(1);
    expect(Date.parse(weekly[1]!.week_start) - Date.parse(weekly[0]!.week_start)).toBe(7 * 86_400_000);

    // A one-hour window holds only the invocations of "now".
    expect((await api.request('GET', '/usage/value-events?window=3600&weeks=1')).body).toMatchObject({ window_secs: 3600, total: 3, weekly: [{ count: 3 }] });
  });

  it('answers zero counts without a licence, and validates the query', async () => {
    api = await startPlatformTestApi({ licence: null });
    expect((await api.request('GET', '/usage')).body).toEqual({ total_input_tokens: 0, total_output_tokens: 0, total_requests: 0, total_cost_usd: 0 });
    const empty = await api.request('GET', '/usage/value-events');
    expect(empty.body).toMatchObject({ total: 0, by_class: { intake: 0, servicing: 0, recovery: 0, underwriting: 0, compliance: 0 }, by_solution: {} });
    expect(empty.body.weekly).toHaveLength(12);
    // A window beyond what a date can hold was a 500 Internal (found by the fuzz pass): bounded at 100 years.
    expect((await api.request('GET', '/usage/value-events?window=3155760000')).status).toBe(200);
    for (const query of ['window=0', 'weeks=0', 'weeks=521', 'window=abc', 'window=3155760001', 'window=99999999999999999999']) {
      const res = await api.request('GET', `/usage/value-events?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error.category).toBe('ValidationError');
    }
  });

  it('is readable by the BudgetRead roles only', async () => {
    api = await startPlatformTestApi({ config: { auth: { mode: 'local' } } });
    expect((await api.request('GET', '/usage', { token: await api.issueKey('viewer') })).status).toBe(200);
    const service = await api.request('GET', '/usage/summary', { token: await api.issueKey('service') });
    expect(service.status).toBe(403);
    expect(service.body).toEqual({ error: 'forbidden', message: expect.stringContaining('BudgetRead') });
  });
});
