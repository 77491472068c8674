import { createMetrics } from '@agent-platform/observability';
import { describe, expect, it } from 'vitest';
import { instrumentLicence } from './instrument.ts';

describe('instrumentLicence', () => {
  it('reports no licence gauge sample without a licence (an absent expiry, not 0, so no alert fires)', async () => {
    const metrics = createMetrics();
    instrumentLicence(
      { status: async () => ({ status: 'no_licence', message: 'none', enforcement: 'all_blocked' }) },
      metrics,
    );
    const text = await metrics.render();
    expect(text).toContain('# TYPE licence_expiry_timestamp_seconds gauge');
    expect(text).not.toMatch(/^licence_\w+(\{[^}]*\})? /m);
  });

  it('reads the budgets once per scrape and reports capped types and spend', async () => {
    const metrics = createMetrics();
    let reads = 0;
    instrumentLicence(
      {
        status: async () => {
          reads += 1;
          return {
            carrier_name: 'C',
            carrier_id: 'c-1',
            status: 'active',
            expires_at: '2030-01-01T00:00:00.000Z',
            period_start: '2029-12-01T00:00:00.000Z',
            period_end: '2030-01-01T00:00:00.000Z',
            days_remaining: 30,
            transaction_utilization: {
              claims: { budget: 10, used: 4, remaining: 6 },
              uncapped: { budget: null, used: 2, remaining: null },
            },
            cloud_spend: null,
            provider_entitlements: [
              { provider_id: 'oa', budget_usd: 50, spent_usd: 12.5, remaining_usd: 37.5 },
            ],
            providers: { local: true, managed_cloud: false },
          };
        },
      },
      metrics,
    );
    const text = await metrics.render();
    expect(reads).toBe(1);
    expect(text).toContain('licence_transactions_used{workflow_type="claims"} 4');
    expect(text).toContain('licence_transactions_budget{workflow_type="claims"} 10');
    expect(text).toContain('licence_transactions_remaining{workflow_type="claims"} 6');
    expect(text).not.toContain('workflow_type="uncapped"');
    expect(text).toContain('licence_spend_usd{budget="provider:oa"} 12.5');
    expect(text).toContain('licence_spend_budget_usd{budget="provider:oa"} 50');
    expect(text).toContain(
      `licence_expiry_timestamp_seconds{carrier_id="c-1"} ${Date.parse('2030-01-01T00:00:00.000Z') / 1000}`,
    );
  });
});
