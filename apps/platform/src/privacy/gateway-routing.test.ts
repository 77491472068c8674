import { readFile, writeFile } from 'node:fs/promises';
import type { Role } from '@agent-platform/contracts';
import { corpusMessage, leakedValues } from '@agent-platform/privacy/testing';
import { startFakeOpenAiServer, type FakeOpenAiServer, type RecordedRequest } from '@agent-platform/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { insertAgent, startPlatformTestApi, type PlatformTestApi } from '../testing/platform-test-api.ts';

// Routing by the privacy gateway's policy, the two compliance figures it feeds, and the gateway
// routes, in the all-in-one (docs/privacy-gateway.md). Two model stand-ins speaking the OpenAI
// protocol: `oa`, the default model in the cloud, and `onprem`, a local-eligible one.
let cloud: FakeOpenAiServer;
let onprem: FakeOpenAiServer;
let api: PlatformTestApi | null = null;

function echo(request: RecordedRequest) {
  const messages = (request.body?.messages ?? []) as Array<{ role: string; content: string }>;
  return { text: messages.filter((m) => m.role === 'user').at(-1)?.content ?? '' };
}

beforeAll(async () => {
  [cloud, onprem] = await Promise.all([
    startFakeOpenAiServer({ fallback: echo }),
    startFakeOpenAiServer({ fallback: echo }),
  ]);
});
afterAll(async () => Promise.all([cloud.close(), onprem.close()]));
afterEach(async () => {
  await api?.close();
  api = null;
  cloud.requests.length = 0;
  onprem.requests.length = 0;
});

function config(
  options: { onpremEligible?: boolean; gateway?: Record<string, unknown>; audit?: boolean } = {},
) {
  return {
    auth: { mode: 'local' as const },
    providers: [
      { id: 'oa', kind: 'openai' as const, base_url: cloud.url, models: ['gpt-test'] },
      {
        id: 'onprem',
        kind: 'openai' as const,
        base_url: onprem.url,
        models: ['llama'],
        local_eligible: options.onpremEligible ?? true,
      },
    ],
    models: { default: 'oa/gpt-test' },
    // A provider failure is answered at once: one attempt.
    model_calls: { llm_retry_max_attempts: 1 },
    gateway: { forced_local: true, ...options.gateway },
    audit: { enabled: options.audit ?? true },
  };
}

const PII = 'Please call me on +44 20 7946 0958 about POL-123456.';

describe('routing', () => {
  it('sends a request with personal data to the local-eligible provider: the cloud stand-in receives nothing', async () => {
    api = await startPlatformTestApi({ config: config() });
    const admin = await api.issueKey('admin');
    const agent = await insertAgent(api);
    const res = await api.request('POST', `/agents/${agent.id}/send`, {
      token: admin,
      body: { message: PII },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.content).toBe(PII);
    expect(cloud.requests).toHaveLength(0);
    expect(onprem.requests).toHaveLength(1);
    expect(onprem.requests[0]!.body.model).toBe('llama');
    expect(leakedValues(JSON.stringify(onprem.requests[0]!.body))).toEqual([]);
    // Without personal data it goes where it was aimed...
    const other = await insertAgent(api);
    const plain = await api.request('POST', `/agents/${other.id}/send`, {
      token: admin,
      body: { message: 'What does my cover include?' },
    });
    expect(plain.body.content).toBe('What does my cover include?');
    expect(cloud.requests).toHaveLength(1);
    expect(onprem.requests).toHaveLength(1);
    // ...but a conversation whose history holds personal data is a request with personal data.
    await api.request('POST', `/agents/${agent.id}/send`, {
      token: admin,
      body: { message: 'What does my cover include?' },
    });
    expect(onprem.requests).toHaveLength(2);
    expect(cloud.requests).toHaveLength(1);
  });

  it('with forced_local and no local-eligible provider, refuses with 403 PermissionDenied and sends nothing', async () => {
    api = await startPlatformTestApi({ config: config({ onpremEligible: false }) });
    const admin = await api.issueKey('admin');
    const agent = await insertAgent(api);
    const res = await api.request('POST', `/agents/${agent.id}/send`, {
      token: admin,
      body: { message: PII },
    });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({
      category: 'PermissionDenied',
      details: { reason: 'no_local_model', pii_categories: ['policy_number', 'phone'] },
    });
    expect(res.body.error.message).toContain('forced_local');
    expect(JSON.stringify(res.body)).not.toContain('7946');
    expect(cloud.requests).toHaveLength(0);
    expect(onprem.requests).toHaveLength(0);
    // Nothing was charged or counted as used (the licence gate never saw it).
    expect((await api.request('GET', '/usage', { token: admin })).body.total_requests).toBe(0);
    const traffic = await api.request('GET', '/gateway/traffic?limit=1', { token: admin });
    expect(traffic.body.decisions[0]).toMatchObject({
      outcome: 'refused',
      provider: null,
      pii_detected: true,
      local_eligible: false,
    });
  });
});

describe('the compliance figures', () => {
  it('count a known mix exactly, a provider failure after tokenisation included, and agree with the audit trail', async () => {
    api = await startPlatformTestApi({ config: config() });
    const admin = await api.issueKey('admin');
    // A fresh agent for each request: no history carries personal data from one to the next.
    const send = async (message: string) =>
      api!.request('POST', `/agents/${(await insertAgent(api!)).id}/send`, {
        token: admin,
        body: { message },
      });
    const figures = async () => ({
      coverage: (await api!.request('GET', '/compliance/pii-coverage', { token: admin })).body,
      routing: (await api!.request('GET', '/compliance/forced-local-routing', { token: admin })).body,
    });
    expect(await figures()).toEqual({
      coverage: { coverage_pct: 100, tokenised: 0, hydrated: 0 },
      routing: { forced_local: 0, local_eligible: 0, pct_of_local_eligible: null, target_pct: 85 },
    });

    expect((await send(PII)).status).toBe(200); // 1: PII, forced to onprem, hydrated
    expect((await send('Is hail damage covered?')).status).toBe(200); // 2: no PII, to the cloud
    onprem.script({ status: 500, message: 'GPU fell over' });
    expect((await send(`Mail me at jane@example.com`)).status).toBe(502); // 3: PII, forced, tokenised, the provider fails
    expect((await send(corpusMessage())).status).toBe(200); // 4: PII, forced, hydrated
    // 5: the policy switched off by a reload: PII goes to the cloud (eligible, not forced).
    await rewriteConfig(api, (text) => text.replace(/forced_local = true/, 'forced_local = false'));
    expect((await api.request('POST', '/config/reload', { token: admin })).status).toBe(200);
    expect((await send(PII)).status).toBe(200);
    // 6: no category configured: a routing entry without detected-PII metadata, in neither count.
    await rewriteConfig(api, (text) => text.replace(/\[gateway\]/, '[gateway]\ncategories = []'));
    expect((await api.request('POST', '/config/reload', { token: admin })).status).toBe(200);
    expect((await send(PII)).status).toBe(200);

    expect(await figures()).toEqual({
      coverage: { coverage_pct: (3 / 4) * 100, tokenised: 4, hydrated: 3 },
      routing: { forced_local: 3, local_eligible: 4, pct_of_local_eligible: (3 / 4) * 100, target_pct: 85 },
    });
    // The same numbers, counted from the trail itself.
    const entries = (
      await api.request('GET', '/security/audit?category=privacy&limit=1000', { token: admin })
    ).body.entries as Array<{
      action: string;
      metadata: Record<string, unknown>;
    }>;
    const routing = entries.filter((e) => e.action === 'gateway.routing');
    expect(routing).toHaveLength(6);
    expect(entries.filter((e) => e.action === 'gateway.pii.tokenised')).toHaveLength(4);
    expect(entries.filter((e) => e.action === 'gateway.pii.hydrated')).toHaveLength(3);
    expect(routing.filter((e) => e.metadata.forced_local === true)).toHaveLength(3);
    expect(
      routing.filter((e) => e.metadata.pii_detected === true && e.metadata.local_eligible === true),
    ).toHaveLength(4);
    expect(routing.filter((e) => !('pii_detected' in e.metadata))).toHaveLength(1);
    // The cloud stand-in got the two requests sent its way after the reloads and the one without PII, tokenised.
    expect(cloud.requests).toHaveLength(3);
    expect(JSON.stringify(cloud.requests[1]!.body)).not.toContain('7946');
  });

  it('answer the disabled shapes with [audit] enabled = false (the gateway still tokenises)', async () => {
    api = await startPlatformTestApi({ config: config({ audit: false }) });
    const admin = await api.issueKey('admin');
    const agent = await insertAgent(api);
    expect(
      (await api.request('POST', `/agents/${agent.id}/send`, { token: admin, body: { message: PII } })).body
        .content,
    ).toBe(PII);
    expect(leakedValues(JSON.stringify(onprem.requests.map((r) => r.body)))).toEqual([]);
    expect((await api.request('GET', '/compliance/pii-coverage', { token: admin })).body).toEqual({
      coverage_pct: null,
      tokenised: 0,
      hydrated: 0,
      status: 'disabled',
    });
    expect((await api.request('GET', '/compliance/forced-local-routing', { token: admin })).body).toEqual({
      forced_local: 0,
      local_eligible: 0,
      pct_of_local_eligible: null,
      target_pct: 85,
      status: 'disabled',
    });
  });
});

describe('GET /gateway/pools and /gateway/traffic', () => {
  it('shows the pools, the policy and the recent decisions, newest first, with counts and categories only', async () => {
    api = await startPlatformTestApi({ config: config() });
    const admin = await api.issueKey('admin');
    const agent = await insertAgent(api);
    await api.request('POST', `/agents/${agent.id}/send`, {
      token: admin,
      body: { message: corpusMessage() },
    });
    await api.request('POST', `/agents/${(await insertAgent(api)).id}/send`, {
      token: admin,
      body: { message: 'hello' },
    });

    const pools = await api.request('GET', '/gateway/pools', { token: admin });
    expect(pools.status).toBe(200);
    expect(pools.body.policy).toMatchObject({
      enabled: true,
      forced_local: true,
      when_no_local: 'refuse',
      default_model: 'oa/gpt-test',
      local_model: 'onprem/llama',
    });
    expect(
      pools.body.pools.map((p: { pool: string; providers: Array<{ id: string }> }) => [
        p.pool,
        p.providers.map((x) => x.id),
      ]),
    ).toEqual([
      ['local', ['local', 'onprem']],
      ['cloud', ['oa']],
    ]);
    const [local, cloudPool] = pools.body.pools;
    expect(local.providers[1]).toEqual({
      id: 'onprem',
      kind: 'openai',
      base_url: onprem.url,
      models: ['llama'],
      local_eligible: true,
      default: false,
      forced_local_target: true,
      health: { status: 'ok', last_ok_at: expect.any(String), last_failure_at: null },
    });
    expect(cloudPool.providers[0]).toMatchObject({
      id: 'oa',
      default: true,
      forced_local_target: false,
      health: { status: 'ok' },
    });

    const traffic = await api.request('GET', '/gateway/traffic?limit=5', { token: admin });
    expect(traffic.status).toBe(200);
    expect(traffic.body.retention_hours).toBe(24);
    const [latest, first] = traffic.body.decisions;
    expect(latest).toMatchObject({
      provider: 'oa',
      pii_detected: false,
      tokenised: false,
      hydrated: false,
      forced_local: false,
      outcome: 'ok',
      count: 0,
    });
    expect(first).toMatchObject({
      agent_id: agent.id,
      identity: expect.any(String),
      requested_provider: 'oa',
      requested_model: 'gpt-test',
      provider: 'onprem',
      model: 'llama',
      pii_detected: true,
      local_eligible: true,
      forced_local: true,
      rerouted: true,
      tokenised: true,
      hydrated: true,
      outcome: 'ok',
    });
    expect(first.count).toBeGreaterThan(20);
    expect(first.restored).toBe(first.count);
    expect(Object.keys(first.categories).sort()).toEqual([
      'address',
      'bank_account',
      'claim_number',
      'date_of_birth',
      'email',
      'national_id',
      'payment_card',
      'phone',
      'policy_number',
    ]);
    expect(leakedValues(JSON.stringify(traffic.body))).toEqual([]);
    expect(JSON.stringify(traffic.body)).not.toContain('[[PII');
    expect(
      (await api.request('GET', '/gateway/traffic?limit=1', { token: admin })).body.decisions,
    ).toHaveLength(1);
  });

  it('refuses bad limits with 400 ValidationError', async () => {
    api = await startPlatformTestApi({ config: config() });
    const admin = await api.issueKey('admin');
    for (const limit of ['0', '501', 'abc', '-3', '']) {
      const res = await api.request('GET', `/gateway/traffic?limit=${limit}`, { token: admin });
      expect(res.status, limit).toBe(400);
      expect(res.body.error.category, limit).toBe('ValidationError');
    }
    expect((await api.request('GET', '/gateway/traffic?limit=500', { token: admin })).status).toBe(200);
  });

  it('are SecurityRead, like the compliance figures: admin, operator, viewer and auditor; not developer or service', async () => {
    api = await startPlatformTestApi({ config: config() });
    const allowed: Role[] = ['admin', 'operator', 'viewer', 'auditor'];
    for (const role of ['admin', 'operator', 'developer', 'viewer', 'service', 'auditor'] as Role[]) {
      const token = await api.issueKey(role, `gw-${role}`);
      for (const path of [
        '/gateway/pools',
        '/gateway/traffic',
        '/compliance/pii-coverage',
        '/compliance/forced-local-routing',
      ]) {
        const res = await api.request('GET', path, { token });
        expect(res.status, `${role} ${path}`).toBe(allowed.includes(role) ? 200 : 403);
      }
    }
    expect((await api.request('GET', '/gateway/pools')).status).toBe(401);
  });
});

// The regulator's report and the route read the same audit events: on the same data they must say
// the same (docs/compliance.md "Privacy evidence"). One test per evidence kind, each through the
// NAIC bulletin's report, whose NAIC-07 cites PC-PII-01 and PC-ROUTE-01.
describe('the compliance report and the compliance routes', () => {
  const evidenceOf = async (token: string, kind: string) => {
    const res = await api!.request('GET', '/compliance/packs/naic-ais-bulletin/report', { token });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const controls = res.body.controls as Array<{
      evidence: Array<{ kind: string; status: string; summary: string }>;
    }>;
    const found = controls.flatMap((c) => c.evidence).filter((e) => e.kind === kind);
    expect(found.length, kind).toBeGreaterThan(0);
    expect(new Set(found.map((e) => e.summary)).size, 'one summary per kind').toBe(1);
    return found[0]!;
  };
  const sender = (token: string) => async (message: string) =>
    (await api!.request('POST', `/agents/${(await insertAgent(api!)).id}/send`, { token, body: { message } }))
      .status;

  it('forced_local_routing (PC-ROUTE-01) counts what /compliance/forced-local-routing counts: calls without PII in neither', async () => {
    api = await startPlatformTestApi({ config: config() });
    const admin = await api.issueKey('admin');
    const send = sender(admin);
    const route = async () =>
      (await api!.request('GET', '/compliance/forced-local-routing', { token: admin })).body;
    // Calls without personal data while a local-eligible model exists: pii_detected false, local_eligible true.
    expect(await send('Is hail damage covered?')).toBe(200);
    expect(await send('What does my cover include?')).toBe(200);
    expect(await route()).toMatchObject({ forced_local: 0, local_eligible: 0, pct_of_local_eligible: null });
    const none = await evidenceOf(admin, 'forced_local_routing');
    expect(none.status).toBe('Unknown');
    expect(none.summary).toBe('No local-eligible model call with detected PII was routed.');

    expect(await send(PII)).toBe(200); // PII, forced to onprem
    await rewriteConfig(api, (text) => text.replace(/forced_local = true/, 'forced_local = false'));
    expect((await api.request('POST', '/config/reload', { token: admin })).status).toBe(200);
    expect(await send(PII)).toBe(200); // PII, eligible, not forced
    expect(await send('Is flood damage covered?')).toBe(200);
    expect(await route()).toMatchObject({ forced_local: 1, local_eligible: 2, pct_of_local_eligible: 50 });
    const some = await evidenceOf(admin, 'forced_local_routing');
    expect(some.status).toBe('Unsatisfied');
    expect(some.summary).toContain('1 of 2 local-eligible calls with detected PII (50.0%) were forced');
  });

  it('pii_tokenisation (PC-PII-01) counts what /compliance/pii-coverage counts', async () => {
    api = await startPlatformTestApi({ config: config() });
    const admin = await api.issueKey('admin');
    const send = sender(admin);
    const route = async () => (await api!.request('GET', '/compliance/pii-coverage', { token: admin })).body;
    expect(await send('Is hail damage covered?')).toBe(200);
    expect(await route()).toEqual({ coverage_pct: 100, tokenised: 0, hydrated: 0 });
    const none = await evidenceOf(admin, 'pii_tokenisation');
    expect(none.status).toBe('Unknown');
    expect(none.summary).toBe('The privacy gateway recorded no tokenised PII.');

    expect(await send(corpusMessage())).toBe(200); // tokenised, hydrated
    onprem.script({ status: 500, message: 'GPU fell over' });
    expect(await send(PII)).toBe(502); // tokenised, the provider fails: never hydrated
    expect(await route()).toEqual({ coverage_pct: 50, tokenised: 2, hydrated: 1 });
    const some = await evidenceOf(admin, 'pii_tokenisation');
    expect(some.status).toBe('Satisfied');
    expect(some.summary).toContain(
      'Model requests with PII tokenised: 2; replies restored: 1 (coverage 50.0%)',
    );
  });
});

async function rewriteConfig(t: PlatformTestApi, change: (text: string) => string): Promise<void> {
  const text = await readFile(t.configPath, 'utf8');
  const next = change(text);
  expect(next).not.toBe(text);
  await writeFile(t.configPath, next);
}
