import { describe, expect, it } from 'vitest';
import { checkConnectors, type ConnectorProbe } from './connector-health.ts';

const settings = (urls: Record<string, string>) => ({ urls, latency_budget_ms: 100, timeout_ms: 200 });

describe('checkConnectors', () => {
  it('answers within the timeout even when a probe ignores the abort and never settles', async () => {
    const never: ConnectorProbe = () => new Promise(() => undefined);
    const started = Date.now();
    const items = await checkConnectors(settings({ crm: 'http://crm.test' }), never);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(items.find((i) => i.id === 'crm')).toEqual({
      id: 'crm',
      name: 'CRM',
      status: 'Unreachable',
      latency_ms: null,
      error: 'no answer within 200 ms',
    });
  });

  it('classifies by latency budget and status, and reports a thrown probe as Unreachable with its message', async () => {
    const probe: ConnectorProbe = async (url) => {
      if (url.includes('fast')) return { ok: true, status: 200, latency_ms: 12.4 };
      if (url.includes('slow')) return { ok: true, status: 200, latency_ms: 150 };
      if (url.includes('dns')) return { ok: false, error: 'ENOTFOUND: getaddrinfo ENOTFOUND dns.test' };
      throw new Error('socket hang up');
    };
    const items = await checkConnectors(
      settings({
        crm: 'http://fast.test',
        payments: 'http://slow.test',
        sso: 'http://dns.test',
        'object-store': 'http://boom.test',
      }),
      probe,
    );
    const byId = Object.fromEntries(items.map((i) => [i.id, i]));
    expect(byId.crm).toMatchObject({ status: 'Healthy', latency_ms: 12, error: null });
    expect(byId.payments).toMatchObject({
      status: 'Degraded',
      latency_ms: 150,
      error: 'answered in 150 ms, over the 100 ms latency budget',
    });
    expect(byId.sso).toMatchObject({
      status: 'Unreachable',
      latency_ms: null,
      error: 'ENOTFOUND: getaddrinfo ENOTFOUND dns.test',
    });
    expect(byId['object-store']).toMatchObject({ status: 'Unreachable', error: 'socket hang up' });
    expect(byId['claims-system']).toMatchObject({ status: 'NotConfigured' });
    expect(items.map((i) => i.id)).toEqual([
      'claims-system',
      'crm',
      'e-signature',
      'object-store',
      'payments',
      'sso',
    ]);
  });
});
