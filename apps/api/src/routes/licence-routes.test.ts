import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateLicenceKeyPair, issueLicence } from '@agent-platform/config';
import type { LicenceClaims, PlatformConfig } from '@agent-platform/contracts';
import { fixedClock } from '@agent-platform/domain';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestApi, type DeepPartial, type TestApi } from '../testing/index.ts';

const NOW = '2026-11-10T12:00:00.000Z';
const nowSecs = Date.parse(NOW) / 1000;
const DAY_SECS = 86_400;

let api: TestApi | null = null;
let dir: string;
let keys: { publicKeyPem: string; privateKeyPem: string };
let clock: ReturnType<typeof fixedClock>;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-licence-routes-'));
  keys = await generateLicenceKeyPair();
  await writeFile(join(dir, 'public.pem'), keys.publicKeyPem);
  clock = fixedClock(NOW);
});

afterEach(async () => {
  await api?.close();
  api = null;
  await rm(dir, { recursive: true, force: true });
});

function claims(overrides: Partial<LicenceClaims> = {}): LicenceClaims {
  return {
    carrier_name: 'Acme Mutual',
    carrier_id: 'acme-001',
    iat: nowSecs - DAY_SECS,
    exp: nowSecs + 20 * DAY_SECS,
    period_start: '2026-11-01T00:00:00Z',
    period_end: '2026-12-01T00:00:00Z',
    transaction_budgets: { claims_intake: 1000, servicing: null },
    cloud_spend_usd: 500,
    provider_entitlements: [{ provider_id: 'openai', budget_usd: 100 }],
    providers: { local: true, managed_cloud: false },
    ...overrides,
  };
}

async function writeLicence(c: LicenceClaims, privateKeyPem = keys.privateKeyPem): Promise<string> {
  const token = await issueLicence(privateKeyPem, c);
  await writeFile(join(dir, 'licence.jwt'), `${token}\n`);
  return token;
}

const LICENCE_CONFIG: DeepPartial<PlatformConfig> = { auth: { mode: 'local' } };

async function start(withLicence = true): Promise<{ t: TestApi; viewer: string }> {
  const config = withLicence
    ? { ...LICENCE_CONFIG, licence: { file: join(dir, 'licence.jwt'), public_key_file: join(dir, 'public.pem') } }
    : LICENCE_CONFIG;
  api = await startTestApi({ config, clock, listen: false });
  return { t: api, viewer: await api.issueKey('viewer') };
}

async function status(t: TestApi, token: string): Promise<Record<string, unknown>> {
  const res = await t.request('GET', '/licence/status', { token });
  expect(res.status).toBe(200);
  return res.body as Record<string, unknown>;
}

describe('GET /licence/status', () => {
  it('shows the loaded licence with the usage of its period', async () => {
    await writeLicence(claims());
    const { t, viewer } = await start();
    const gate = t.deps.licence.gate;
    for (let i = 0; i < 3; i++) await (await gate.authorize({ provider_id: 'local', workflow_type: 'claims_intake' })).commit({ cost_usd: 0 });
    await (await gate.authorize({ provider_id: 'local', workflow_type: 'underwriting' })).commit({ cost_usd: 0 });
    expect(await status(t, viewer)).toEqual({
      carrier_name: 'Acme Mutual',
      carrier_id: 'acme-001',
      status: 'active',
      expires_at: '2026-11-30T12:00:00.000Z',
      period_start: '2026-11-01T00:00:00.000Z',
      period_end: '2026-12-01T00:00:00.000Z',
      days_remaining: 20,
      transaction_utilization: {
        claims_intake: { budget: 1000, used: 3, remaining: 997 },
        servicing: { budget: null, used: 0, remaining: null },
        underwriting: { budget: null, used: 1, remaining: null },
      },
      cloud_spend: { budget_usd: 500, spent_usd: 0, remaining_usd: 500 },
      provider_entitlements: [{ provider_id: 'openai', budget_usd: 100, spent_usd: 0, remaining_usd: 100 }],
      providers: { local: true, managed_cloud: false },
    });
  });

  it('moves from active to expiring_soon to expired with the clock', async () => {
    await writeLicence(claims({ cloud_spend_usd: null, provider_entitlements: [], transaction_budgets: {} }));
    const { t, viewer } = await start();
    expect(await status(t, viewer)).toMatchObject({ status: 'active', days_remaining: 20, cloud_spend: null, provider_entitlements: [], transaction_utilization: {} });
    clock.set(new Date((nowSecs + 13 * DAY_SECS) * 1000));
    expect(await status(t, viewer)).toMatchObject({ status: 'expiring_soon', days_remaining: 7 });
    clock.set(new Date((nowSecs + 20 * DAY_SECS) * 1000));
    expect(await status(t, viewer)).toMatchObject({ status: 'expired', days_remaining: 0 });
    await expect(t.deps.licence.gate.authorize({ provider_id: 'local' })).rejects.toMatchObject({ category: 'PermissionDenied' });
  });

  it('answers no_licence when none is configured', async () => {
    const { t, viewer } = await start(false);
    expect(await status(t, viewer)).toEqual({
      status: 'no_licence',
      message: 'No licence is loaded (no [licence] file is configured); all model invocations are blocked.',
      enforcement: 'all_blocked',
    });
  });

  it('treats a licence signed by another key as no licence, logging why without the token', async () => {
    const token = await writeLicence(claims(), (await generateLicenceKeyPair()).privateKeyPem);
    const { t, viewer } = await start();
    expect(await status(t, viewer)).toMatchObject({ status: 'no_licence', message: expect.stringContaining('signature does not verify') });
    expect(t.logs().some((line) => line.includes('signature does not verify'))).toBe(true);
    expect(t.logs().join('\n')).not.toContain(token);
    await expect(t.deps.licence.gate.authorize({ provider_id: 'local' })).rejects.toMatchObject({
      category: 'PermissionDenied',
      details: { reason: 'no_licence' },
    });
  });

  it('takes the licence files as they are on POST /config/reload', async () => {
    await writeLicence(claims());
    const { t, viewer } = await start();
    const admin = await t.issueKey('admin');
    await writeLicence(claims({ carrier_name: 'Beta Insurance', carrier_id: 'beta-002', period_start: '2026-11-05T00:00:00Z' }));
    expect(await status(t, viewer)).toMatchObject({ carrier_id: 'acme-001' });
    expect((await t.request('POST', '/config/reload', { token: admin })).status).toBe(200);
    expect(await status(t, viewer)).toMatchObject({ carrier_id: 'beta-002', carrier_name: 'Beta Insurance', period_start: '2026-11-05T00:00:00.000Z' });

    // A licence that no longer verifies replaces the held one: no licence, not the old one.
    const text = await readFile(join(dir, 'licence.jwt'), 'utf8');
    await writeFile(join(dir, 'licence.jwt'), text.replace(/.{4}\n$/, 'AAAA\n'));
    expect((await t.request('POST', '/config/reload', { token: admin })).status).toBe(200);
    expect(await status(t, viewer)).toMatchObject({ status: 'no_licence' });
  });

  it('is readable by the reader roles and refused to service', async () => {
    await writeLicence(claims());
    const { t } = await start();
    for (const role of ['admin', 'operator', 'developer', 'viewer', 'auditor'] as const) {
      expect((await t.request('GET', '/licence/status', { token: await t.issueKey(role) })).status).toBe(200);
    }
    const res = await t.request('GET', '/licence/status', { token: await t.issueKey('service') });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'forbidden', message: expect.stringContaining('LicenceRead') });
    expect((await t.request('GET', '/licence/status')).status).toBe(401);
  });
});
