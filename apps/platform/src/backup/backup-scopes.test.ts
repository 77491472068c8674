import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AGENT_COLLECTIONS } from '@agent-platform/backup';
import { REGISTRY_COLLECTIONS } from '@agent-platform/registry-core';
import { afterEach, describe, expect, it } from 'vitest';
import { startPlatformTestApi, type PlatformTestApi } from '../testing/platform-test-api.ts';

/**
 * The collections that are platform state, not an agent's: in `full` backups only (docs/backup.md
 * "Scopes"). A collection in neither this list nor AGENT_COLLECTIONS fails the test below, so that
 * whoever adds one decides whether an agents_only backup carries it.
 */
const PLATFORM_COLLECTIONS: string[] = [
  'api_keys',
  'auth_failures',
  'bootstrap_claims',
  'vault',
  'idempotency',
  'cron_fires',
  'trigger_fires',
  'webhook_deliveries',
  'webhook_fan_out',
  'workflow_runs',
  'workflow_admissions',
  'integration_desired',
  'integration_nodes',
  'integration_hosts',
  'channels',
  'channel_leases',
  'channel_messages',
  'channel_replies',
  'catalog_revocations',
  'catalog_revocation_claims',
  'catalog_revocation_cursors',
  'platform_installation',
  // The registry surface's records (docs/registry.md), when it runs on this store.
  ...Object.values(REGISTRY_COLLECTIONS),
  // Legal holds and the retention sweep's progress (docs/retention.md).
  'retention_holds',
  'retention_state',
  // Signed attestations of manual compliance controls (docs/compliance.md).
  'compliance_attestations',
  // The privacy gateway's recent routing decisions (docs/privacy-gateway.md).
  'gateway_traffic',
  // What every node of a fleet must hold (docs/scale-out.md "The fleet agreement"); re-recorded after a restore.
  'fleet_agreement',
  // The fences of invocations whose worker may be lost (docs/invocation.md "A worker that dies"), a day each.
  'invocation_fences',
];

const example = (name: string) => fileURLToPath(new URL(`../../../../examples/${name}`, import.meta.url));
const Database = createRequire(import.meta.url)('better-sqlite3') as new (
  path: string,
  options: { readonly: boolean },
) => {
  prepare(sql: string): { all(): Array<{ name: string }> };
  close(): void;
};

let api: PlatformTestApi | null = null;
afterEach(async () => {
  await api?.close();
  api = null;
});

describe('backup scopes', () => {
  it('every collection of a running platform is either an agent collection or a platform one', async () => {
    api = await startPlatformTestApi({ config: { auth: { mode: 'local' } } });
    const admin = await api.issueKey('admin');
    const installed = await api.request('POST', '/catalog/install', {
      token: admin,
      body: { path: example('claims-intake'), activate: true },
    });
    const agent = installed.body.installed.at(-1).id as string;
    await api.request('PUT', `/agents/${agent}/memory/k`, { token: admin, body: { value: 'v' } });
    await api.request('POST', `/agents/${agent}/send`, { token: admin, body: { message: 'hello' } });
    await api.request('POST', '/backup/create', { token: admin, body: { scope: 'agents_only' } });

    const db = new Database(join(api.dataDir, 'data', 'platform.db'), { readonly: true });
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
      .all()
      .map((r) => r.name);
    db.close();
    const collections = tables.filter((t) => t.startsWith('c_')).map((t) => t.slice(2));
    const unclassified = collections.filter(
      (c) => !(AGENT_COLLECTIONS as readonly string[]).includes(c) && !PLATFORM_COLLECTIONS.includes(c),
    );
    expect(
      unclassified,
      'add each to AGENT_COLLECTIONS (libs/backup/src/backup-scopes.ts) or PLATFORM_COLLECTIONS here',
    ).toEqual([]);
    expect(AGENT_COLLECTIONS.filter((c) => !collections.includes(c))).toEqual([]);
  });
});
