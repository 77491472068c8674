import { selfSignedCert } from '@agent-platform/testkit';
import { createRequire } from 'node:module';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateLicenceKeyPair, issueLicence } from '@agent-platform/config';
import type { LicenceClaims, PlatformConfig } from '@agent-platform/contracts';
import {
  catalogCollections,
  createAgentStore,
  workflowRuns,
  type Clock,
  type InstalledPackageRecord,
  type WorkflowRunRecord,
} from '@agent-platform/domain';
import { agentFixture } from '@agent-platform/domain/testing';
import { startTestApi, type DeepPartial, type TestApi, type TestResponse } from '../testing/index.ts';

/**
 * Test platforms for compliance reports (not shipped): a well-run one, where every automatic
 * platform control has passing evidence, and a neglected one, where most of them fail. Their
 * state is made the way a user makes it where that is cheap (keys, vault, suspend, checkpoint
 * over HTTP) and written straight to the store where the real path needs a registry or a model
 * (registry-installed packages, an Escalated run, the privacy gateway's audit entries).
 */
export type FixtureKind = 'well-run' | 'neglected';

export interface CompliancePlatform {
  api: TestApi;
  /** Secrets of the admin and auditor keys (mode local); '' in the neglected one (auth disabled). */
  admin: string;
  auditor: string;
}

const DAY_SECS = 86_400;

function claims(now: Date): LicenceClaims {
  const secs = Math.floor(now.getTime() / 1000);
  return {
    carrier_name: 'Acme Mutual',
    carrier_id: 'acme-001',
    iat: secs - DAY_SECS,
    exp: secs + 30 * DAY_SECS,
    period_start: new Date((secs - DAY_SECS) * 1000).toISOString(),
    period_end: new Date((secs + 29 * DAY_SECS) * 1000).toISOString(),
    transaction_budgets: { claims_intake: 1000, servicing: null },
    cloud_spend_usd: 500,
    provider_entitlements: [{ provider_id: 'fake', budget_usd: 100 }],
    providers: { local: true, managed_cloud: false },
  };
}

async function wellRunConfig(dir: string, now: Date): Promise<DeepPartial<PlatformConfig>> {
  const keys = await generateLicenceKeyPair();
  await writeFile(join(dir, 'licence-public.pem'), keys.publicKeyPem);
  await writeFile(join(dir, 'licence.jwt'), `${await issueLicence(keys.privateKeyPem, claims(now))}\n`);
  await mkdir(join(dir, 'sink'), { recursive: true });
  return {
    server: { tls: selfSignedCert(dir) },
    auth: { mode: 'local' },
    licence: { file: join(dir, 'licence.jwt'), public_key_file: join(dir, 'licence-public.pem') },
    audit: { checkpoints: { sink: join(dir, 'sink') } },
    providers: [{ id: 'fake', kind: 'openai', base_url: 'http://127.0.0.1:9/v1', models: ['m'] }],
  };
}

function packageRecord(
  name: string,
  type: InstalledPackageRecord['type'],
  source: 'registry' | 'path',
  at: string,
): InstalledPackageRecord {
  return {
    id: name,
    name,
    type,
    version: '1.2.0',
    title: name,
    description: `${name} (fixture)`,
    installed_at: at,
    updated_at: at,
    content_hash: `sha256:${'ab'.repeat(32)}`,
    manifest: {} as InstalledPackageRecord['manifest'],
    payload: null,
    entity_id: name,
    dependencies: [],
    source,
  };
}

function runRecord(id: string, state: WorkflowRunRecord['state'], at: string): WorkflowRunRecord {
  return {
    id,
    workflow_id: 'wf-1',
    workflow_name: 'claims-review',
    input: 'x',
    state,
    step_results: [],
    output: null,
    error: null,
    started_at: at,
    completed_at: at,
  } as unknown as WorkflowRunRecord;
}

/** The privacy gateway's entries as its helper specifies them (category privacy). */
async function privacyEvents(
  api: TestApi,
  forced: number,
  eligible: number,
  tokenised: number,
): Promise<void> {
  const record = (action: string, metadata: Record<string, unknown>) =>
    api.deps.audit.record({
      category: 'privacy',
      identity: 'agent:claims-intake',
      role: 'service',
      action,
      target: 'fake/m',
      result: 'success',
      metadata,
    });
  if (tokenised > 0) {
    await record('gateway.pii.tokenised', {
      count: tokenised,
      categories: ['name', 'policy_number'],
      provider: 'fake',
      model: 'm',
      correlation_id: 'c-1',
    });
    await record('gateway.pii.hydrated', {
      count: tokenised,
      categories: ['name', 'policy_number'],
      correlation_id: 'c-1',
    });
  }
  for (let i = 0; i < eligible; i++) {
    await record('gateway.routing', {
      pii_detected: true,
      pii_categories: ['name'],
      local_eligible: true,
      forced_local: i < forced,
      requested_provider: 'fake',
      provider: i < forced ? 'local' : 'fake',
      model: 'm',
      correlation_id: `r-${i}`,
    });
  }
  // Without detected-PII metadata: left out of the forced-local figures (spec §Compliance).
  await record('gateway.routing', {
    local_eligible: true,
    forced_local: false,
    requested_provider: 'fake',
    provider: 'fake',
    model: 'm',
    correlation_id: 'r-x',
  });
}

function expectStatus(response: TestResponse, status: number, what: string): void {
  if (response.status !== status)
    throw new Error(`${what}: expected ${status}, got ${response.status} ${JSON.stringify(response.body)}`);
}

/** Starts a platform in the given state; `extra` config is merged over the fixture's. */
export async function startCompliancePlatform(
  kind: FixtureKind,
  options: { clock: Clock; dir: string; config?: DeepPartial<PlatformConfig> },
): Promise<CompliancePlatform> {
  const now = options.clock.now();
  const base =
    kind === 'well-run' ? await wellRunConfig(options.dir, now) : { auth: { mode: 'disabled' as const } };
  const api = await startTestApi({
    config: { ...base, ...options.config },
    clock: options.clock,
    listen: false,
  });
  const at = now.toISOString();
  const store = api.deps.store;
  const packages = catalogCollections(store).packages;
  const agent = await createAgentStore(store).insert(agentFixture({ name: 'claims-intake' }, at));
  await workflowRuns(store).insert(runRecord('00000000-0000-4000-8000-000000000001', 'Completed', at));

  if (kind === 'neglected') {
    await api.deps.keys.create({ name: 'ops', role: 'operator' });
    await packages.insert(packageRecord('claims-intake', 'agent-template', 'path', at));
    await privacyEvents(api, 5, 10, 0);
    return { api, admin: '', auditor: '' };
  }

  const admin = (await api.deps.keys.create({ name: 'ciso-office', role: 'admin', expires_in: '90d' }))
    .secret;
  const auditor = (
    await api.deps.keys.create({ name: 'external-auditor', role: 'auditor', expires_in: '90d' })
  ).secret;
  expectStatus(
    await api.request('PUT', '/vault/fake-api-key', { token: admin, body: { value: 'sk-fixture' } }),
    200,
    'vault put',
  );
  await packages.insert(packageRecord('claims-intake', 'agent-template', 'registry', at));
  await packages.insert(packageRecord('fnol-triage', 'competency', 'registry', at));
  expectStatus(await api.request('POST', `/agents/${agent.id}/suspend`, { token: admin }), 200, 'suspend');
  expectStatus(await api.request('POST', `/agents/${agent.id}/activate`, { token: admin }), 200, 'activate');
  await workflowRuns(store).insert(runRecord('00000000-0000-4000-8000-000000000002', 'Escalated', at));
  await privacyEvents(api, 9, 10, 3);
  // The auditor anchors the trail outside the store (and so shows the auditor role in use).
  if (api.deps.audit.enabled)
    expectStatus(await api.request('POST', '/security/checkpoints', { token: auditor }), 201, 'checkpoint');
  return { api, admin, auditor };
}

/** The one better-sqlite3 call the tamper tests make on the store's file (the package has no types here). */
type RawDb = { prepare(sql: string): { run(...args: unknown[]): unknown }; close(): void };

/**
 * Runs one SQL statement on the embedded store's file, as someone with write access to the disk
 * would: edits the platform itself never makes (an audit entry rewritten, entries deleted, an
 * attestation altered). `dataDir` is the test api's.
 */
export function editStore(dataDir: string, sql: string, ...args: unknown[]): void {
  const Database = createRequire(import.meta.url)('better-sqlite3') as new (path: string) => RawDb;
  const db = new Database(join(dataDir, 'data', 'platform.db'));
  try {
    db.prepare(sql).run(...args);
  } finally {
    db.close();
  }
}
