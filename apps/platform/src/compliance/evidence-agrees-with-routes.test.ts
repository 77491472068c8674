import { selfSignedCert } from '@agent-platform/testkit';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ComplianceReport, EvidencePointer, LicenceClaims } from '@agent-platform/contracts';
import {
  catalogCollections,
  fixedClock,
  workflowRuns,
  type InstalledPackageRecord,
  type WorkflowRunRecord,
} from '@agent-platform/domain';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  insertAgent,
  licenceClaims,
  startPlatformTestApi,
  type PlatformTestApi,
  type StartPlatformTestApiOptions,
} from '../testing/platform-test-api.ts';

// The compliance report and the routes a user reads the same state through must say the same on
// the same data (docs/compliance.md "Evidence kinds"): one test per evidence kind, each building
// the state on a real all-in-one, generating the built-in platform-controls report over HTTP and
// comparing the figures of that kind's evidence (its pointers where they carry them, else its
// sentence) with what the route answers. The route is the contract.
//
// Kind -> route:
//   audit_enabled, auth_enforced, tls_enabled -> GET /security/status (audit_enabled, auth_mode, tls_enabled):
//     the kinds read the config, the closest route shows the same three settings
//   audit_chain        -> GET /security/verify?full=true (+ audit_entries of GET /security/status)
//   audit_checkpoints  -> GET /security/checkpoints and checkpoint_status of GET /security/verify
//   audit_retention    -> GET /security/audit (its oldest entry) and the archive of GET /security/verify
//   audit_activity     -> GET /security/audit (filtered by category, action, result, role)
//   role_assigned, key_expiry -> GET /auth/keys
//   package_inventory, packages_signed -> GET /catalog/installed
//   licence_budgets    -> GET /licence/status
//   provider_inventory -> GET /providers and GET /licence/status
//   vault_in_use       -> GET /vault
//   human_escalation   -> GET /runs and GET /runs?state=Escalated
//   pii_tokenisation, forced_local_routing -> apps/platform/src/privacy/gateway-routing.test.ts
//     ('the compliance report and the compliance routes'), with the privacy gateway's real traffic.
// Every kind has a route. Not compared: what no route shows (a package's content_hash, the
// `[auth.oidc] role_mapping` groups of role_assigned, the config-file secrets of vault_in_use).

const DAY_MS = 86_400_000;

let api: PlatformTestApi | null = null;
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-evidence-routes-'));
});
afterEach(async () => {
  await api?.close();
  api = null;
  await rm(dir, { recursive: true, force: true });
});

interface Evidence {
  kind: string;
  status: string;
  summary: string;
  pointers: EvidencePointer[];
}

async function start(
  options: StartPlatformTestApiOptions = {},
): Promise<{ t: PlatformTestApi; admin: string }> {
  await api?.close();
  const config = { auth: { mode: 'local' as const }, ...options.config };
  const t = await startPlatformTestApi({ ...options, config });
  api = t;
  const admin =
    config.auth.mode === 'disabled'
      ? ''
      : (await t.deps.keys.create({ name: 'ciso-office', role: 'admin', expires_in: '90d' })).secret;
  return { t, admin };
}

async function get(t: PlatformTestApi, token: string, path: string) {
  const res = await t.request('GET', path, { token });
  expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body;
}

/** The evidence of one control of the platform-controls report, as GET .../report answers it now. */
async function evidenceOf(t: PlatformTestApi, token: string, controlId: string): Promise<Evidence> {
  const report = (await get(t, token, '/compliance/packs/platform-controls/report')) as ComplianceReport;
  const control = report.controls.find((c) => c.control_id === controlId);
  expect(control, controlId).toBeDefined();
  expect(control!.evidence).toHaveLength(1);
  return control!.evidence[0] as Evidence;
}

const refs = (e: Evidence, type: string) =>
  e.pointers
    .filter((p) => p.type === type)
    .map((p) => p.ref)
    .sort();

/** The integer a pattern's first group captures in an evidence sentence (`/(\d+) entries/` -> 12). */
function figure(summary: string, pattern: RegExp): number {
  const match = pattern.exec(summary);
  expect(match, `${pattern} in "${summary}"`).not.toBeNull();
  return Number(match![1]);
}

/** One statement on the embedded store's file, as someone with write access to the disk would run it. */
function editStore(dataDir: string, sql: string): void {
  type RawDb = { prepare(sql: string): { run(): unknown }; close(): void };
  const Database = createRequire(import.meta.url)('better-sqlite3') as new (path: string) => RawDb;
  const db = new Database(join(dataDir, 'data', 'platform.db'));
  try {
    db.prepare(sql).run();
  } finally {
    db.close();
  }
}

describe('GET /security/status and the posture kinds', () => {
  const AUTH_MODE: Record<string, string> = { local: 'api-key', oidc: 'oidc', disabled: 'none' };
  const cases: Array<{
    kind: string;
    control: string;
    check: (status: Record<string, unknown>, e: Evidence) => void;
  }> = [
    {
      kind: 'audit_enabled',
      control: 'PC-AUDIT-01',
      check: (status, e) => {
        expect(e.kind).toBe('audit_enabled');
        expect(e.pointers).toEqual([
          { type: 'config', ref: 'audit.enabled', detail: String(status.audit_enabled) },
        ]);
        expect(e.status).toBe(status.audit_enabled === true ? 'Satisfied' : 'Unsatisfied');
      },
    },
    {
      kind: 'auth_enforced',
      control: 'PC-AUTH-01',
      check: (status, e) => {
        expect(e.kind).toBe('auth_enforced');
        const [pointer] = e.pointers;
        expect(pointer).toMatchObject({ type: 'config', ref: 'auth.mode' });
        expect(AUTH_MODE[pointer!.detail!]).toBe(status.auth_mode);
        expect(e.status).toBe(status.auth_mode === 'none' ? 'Unsatisfied' : 'Satisfied');
      },
    },
    {
      kind: 'tls_enabled',
      control: 'PC-TLS-01',
      check: (status, e) => {
        expect(e.kind).toBe('tls_enabled');
        expect(e.pointers).toEqual([
          { type: 'config', ref: 'server.tls', detail: status.tls_enabled === true ? 'set' : 'not set' },
        ]);
        expect(e.status).toBe(status.tls_enabled === true ? 'Satisfied' : 'Unsatisfied');
      },
    },
  ];

  it.each(cases)(
    '$kind ($control) says what GET /security/status says, on three postures',
    async ({ control, check }) => {
      const postures: StartPlatformTestApiOptions[] = [
        { config: { auth: { mode: 'local' }, audit: { enabled: true } } },
        { config: { auth: { mode: 'disabled' }, audit: { enabled: false } } },
        { config: { auth: { mode: 'local' }, server: { tls: selfSignedCert(dir) } }, listen: false },
      ];
      const seen = new Set<string>();
      for (const posture of postures) {
        const { t, admin } = await start(posture);
        const status = (await get(t, admin, '/security/status')) as Record<string, unknown>;
        seen.add(JSON.stringify([status.audit_enabled, status.auth_mode, status.tls_enabled]));
        check(status, await evidenceOf(t, admin, control));
      }
      expect(seen.size).toBe(3);
    },
  );
});

describe('the audit trail kinds', () => {
  it('audit_chain (PC-AUDIT-02) counts the entries and names the tip and the first invalid entry as GET /security/verify?full=true does', async () => {
    const { t, admin } = await start();
    for (const key of ['a', 'b', 'c'])
      expect((await t.request('PUT', `/vault/${key}`, { token: admin, body: { value: 'v' } })).status).toBe(
        200,
      );
    const verify = await get(t, admin, '/security/verify?full=true');
    expect(verify.valid).toBe(true);
    const e = await evidenceOf(t, admin, 'PC-AUDIT-02');
    expect(e.status).toBe('Satisfied');
    expect(figure(e.summary, /verifies: (\d+) entries/)).toBe(verify.entry_count);
    expect(e.pointers).toEqual([
      { type: 'audit_seq', ref: `1-${verify.entry_count}`, detail: `tip ${verify.tip_hash}` },
    ]);
    expect((await get(t, admin, '/security/status')).audit_entries).toBe(verify.entry_count);
    expect(await get(t, admin, '/security/verify?full=true')).toEqual(verify);

    editStore(t.dataDir, `UPDATE l_audit SET body = json_set(body, '$.identity', 'mallory') WHERE seq = 2`);
    const broken = await get(t, admin, '/security/verify?full=true');
    expect(broken).toMatchObject({ valid: false, first_invalid_seq: 2 });
    const after = await evidenceOf(t, admin, 'PC-AUDIT-02');
    expect(after.status).toBe('Unsatisfied');
    expect(figure(after.summary, /at seq (\d+)/)).toBe(broken.first_invalid_seq);
    expect(after.pointers).toEqual([
      { type: 'audit_seq', ref: String(broken.first_invalid_seq), detail: 'first invalid entry' },
    ]);

    const off = await start({ config: { audit: { enabled: false } } });
    expect((await get(off.t, off.admin, '/security/verify?full=true')).valid).toBeNull();
    expect((await evidenceOf(off.t, off.admin, 'PC-AUDIT-02')).status).toBe('Unknown');
  });

  it('audit_checkpoints (PC-AUDIT-03) reports the checkpoint GET /security/checkpoints lists, in the state GET /security/verify gives it', async () => {
    const check = async (t: PlatformTestApi, admin: string) => {
      const listed = await get(t, admin, '/security/checkpoints');
      const verify = await get(t, admin, '/security/verify?full=true');
      const e = await evidenceOf(t, admin, 'PC-AUDIT-03');
      const sink = e.pointers.find((p) => p.ref === 'audit.checkpoints.sink');
      if (!listed.enabled) {
        expect(verify.checkpoint_status).toBe('not_configured');
        expect(e.status).toBe('Unsatisfied');
        expect(e.summary).toMatch(/^No checkpoint sink is configured/);
        expect(sink?.detail).toBe('not set');
        return;
      }
      const [latest] = listed.checkpoints as Array<{
        checkpoint: { at: string; entry_count: number; key_id: string };
        sink: string;
      }>;
      if (latest === undefined) {
        expect(verify.checkpoint_status).toBe('none_written');
        expect(e.status).toBe('Unsatisfied');
        expect(e.summary).toBe('A checkpoint sink is configured but no checkpoint was written yet.');
        return;
      }
      const { at, entry_count, key_id } = latest.checkpoint;
      if (verify.checkpoint_status === 'failed') {
        expect(e.status).toBe('Unsatisfied');
        expect(e.summary).toBe(`The latest checkpoint does not match the chain: ${verify.reason}.`);
        expect(e.pointers[1]).toEqual({
          type: 'checkpoint',
          ref: at,
          detail: `${entry_count} entries, key ${key_id}`,
        });
        return;
      }
      expect(verify.checkpoint_status).toBe('verified');
      expect(e.status).toBe('Satisfied');
      expect(e.summary).toContain(`(${at}, ${entry_count} entries)`);
      expect(e.pointers).toEqual([
        { type: 'config', ref: 'audit.checkpoints.sink', detail: latest.sink },
        { type: 'checkpoint', ref: at, detail: `${entry_count} entries, key ${key_id}` },
      ]);
      expect(listed.key_id).toBe(key_id);
    };

    const none = await start({ config: { audit: { checkpoints: { sink: '' } } } });
    await check(none.t, none.admin);

    const sinkDir = join(dir, 'sink');
    await mkdir(sinkDir);
    const { t, admin } = await start({ config: { audit: { checkpoints: { sink: sinkDir } } } });
    await check(t, admin);
    expect((await t.request('POST', '/security/checkpoints', { token: admin })).status).toBe(201);
    expect((await t.request('PUT', '/vault/after', { token: admin, body: { value: 'v' } })).status).toBe(200);
    await check(t, admin);
    expect((await t.request('POST', '/security/checkpoints', { token: admin })).status).toBe(201);
    await check(t, admin);
    // The newest entries cut off the end of the trail: the checkpoint no longer matches.
    const [written] = (await get(t, admin, '/security/checkpoints')).checkpoints as Array<{
      checkpoint: { entry_count: number };
    }>;
    editStore(t.dataDir, `DELETE FROM l_audit WHERE seq >= ${written!.checkpoint.entry_count}`);
    const cutVerify = await get(t, admin, '/security/verify?full=true');
    expect(cutVerify.checkpoint_status, JSON.stringify(cutVerify)).toBe('failed');
    await check(t, admin);
  });

  it('audit_retention (PC-AUDIT-04) names the oldest entry GET /security/audit returns, and the archive GET /security/verify verifies, before and after entries leave the live trail', async () => {
    const clock = fixedClock(new Date());
    const { t, admin } = await start({ clock });
    const agent = await insertAgent(t);
    for (const verb of ['suspend', 'activate', 'suspend'])
      expect((await t.request('POST', `/agents/${agent.id}/${verb}`, { token: admin })).status).toBe(200);
    clock.advance(3 * DAY_MS);
    expect((await t.request('PUT', '/vault/later', { token: admin, body: { value: 'v' } })).status).toBe(200);

    const check = async () => {
      const { entries } = (await get(t, admin, '/security/audit?limit=500')) as {
        entries: Array<{ seq: number; timestamp: string }>;
      };
      const oldest = entries.at(-1)!;
      expect(entries.length).toBeLessThan(500);
      const e = await evidenceOf(t, admin, 'PC-AUDIT-04');
      expect(e.pointers).toEqual([
        { type: 'audit_seq', ref: String(oldest.seq), detail: `oldest entry kept, ${oldest.timestamp}` },
      ]);
      const days = Math.floor((clock.now().getTime() - Date.parse(oldest.timestamp)) / DAY_MS);
      expect(figure(e.summary, /(\d+) days (?:ago|old)/)).toBe(days);
      return { oldest, e };
    };
    const whole = await check();
    expect(whole.oldest.seq).toBe(1);
    expect(whole.e.status).toBe('Satisfied');

    editStore(t.dataDir, 'DELETE FROM l_audit WHERE seq < 3');
    const cut = await check();
    expect(cut.oldest.seq).toBe(3);
    expect(cut.e.status).toBe('Unsatisfied');
    expect(figure(cut.e.summary, /before seq (\d+)/)).toBe(3);

    // Retention moves old entries to the archive (docs/retention.md): GET /security/verify shows
    // them kept there, from seq 1, so nothing was removed although the live trail starts later.
    const sink = join(dir, 'sink');
    await mkdir(sink);
    const archiving = fixedClock(new Date());
    const a = await start({
      clock: archiving,
      config: { audit: { checkpoints: { sink } }, retention: { audit_days: 30, audit_segment_entries: 10 } },
    });
    for (let i = 0; i < 12; i++)
      expect(
        (await a.t.request('PUT', `/vault/k${i}`, { token: a.admin, body: { value: 'v' } })).status,
      ).toBe(200);
    archiving.advance(40 * DAY_MS);
    expect((await a.t.request('PUT', '/vault/fresh', { token: a.admin, body: { value: 'v' } })).status).toBe(
      200,
    );
    expect((await a.t.request('POST', '/retention/sweep', { token: a.admin })).status).toBe(200);
    const verify = await get(a.t, a.admin, '/security/verify?full=true');
    const { entries } = (await get(a.t, a.admin, '/security/audit?limit=500')) as {
      entries: Array<{ seq: number; timestamp: string }>;
    };
    const oldestLive = entries.at(-1)!;
    expect(verify).toMatchObject({ valid: true, archive: { status: 'verified', from_seq: 1 } });
    expect(verify.archive.to_seq + 1).toBe(oldestLive.seq);
    const archived = await evidenceOf(a.t, a.admin, 'PC-AUDIT-04');
    expect(archived.status, archived.summary).toBe('Satisfied');
    expect(archived.pointers).toEqual([
      { type: 'audit_seq', ref: `1-${verify.archive.to_seq}`, detail: `archived, ${verify.archive.sink}` },
      {
        type: 'audit_seq',
        ref: String(oldestLive.seq),
        detail: `oldest entry kept, ${oldestLive.timestamp}`,
      },
    ]);
  });

  it('audit_activity (PC-CHANGE-01, PC-OVERSIGHT-01, PC-AUDITOR-01) counts the entries GET /security/audit returns for its filters', async () => {
    const sinkDir = join(dir, 'sink');
    await mkdir(sinkDir);
    const { t, admin } = await start({ config: { audit: { checkpoints: { sink: sinkDir } } } });
    const auditor = (
      await t.deps.keys.create({ name: 'external-auditor', role: 'auditor', expires_in: '90d' })
    ).secret;
    const operator = (await t.deps.keys.create({ name: 'ops', role: 'operator', expires_in: '90d' })).secret;
    const agent = await insertAgent(t);
    const other = await insertAgent(t);
    const calls: Array<[string, string, number]> = [
      [admin, `/agents/${agent.id}/suspend`, 200],
      [operator, `/agents/${agent.id}/activate`, 200],
      [operator, `/agents/${other.id}/suspend`, 200],
      [operator, `/agents/${other.id}/suspend`, 500], // already suspended: InvalidState (500, spec), recorded, no success
      [admin, '/agents/00000000-0000-4000-8000-00000000dead/suspend', 404],
      [auditor, '/security/checkpoints', 201],
    ];
    for (const [token, path, status] of calls)
      expect((await t.request('POST', path, { token })).status, path).toBe(status);

    const { entries } = (await get(t, admin, '/security/audit?limit=500')) as {
      entries: Array<{ seq: number; role: string; action: string; result: string }>;
    };
    // The route shows no category; the agents ones are asked for with ?category=agents.
    const agents = new Set(
      (
        (await get(t, admin, '/security/audit?limit=500&category=agents')) as {
          entries: Array<{ seq: number }>;
        }
      ).entries.map((e) => e.seq),
    );
    const CHANGE = [
      'POST /catalog/install',
      'DELETE /catalog/installed/:name',
      'POST /agents/:id/suspend',
      'POST /agents/:id/activate',
      'package.revoked',
      'package.revocation.override',
    ];
    const success = (r: string) => r.startsWith('2') || r === 'applied' || r === 'overridden';
    const expected: Record<string, number[]> = {
      'PC-CHANGE-01': entries
        .filter((x) => agents.has(x.seq) && CHANGE.includes(x.action) && success(x.result))
        .map((x) => x.seq),
      'PC-OVERSIGHT-01': entries
        .filter(
          (x) => agents.has(x.seq) && x.action === 'POST /agents/:id/suspend' && x.result.startsWith('2'),
        )
        .map((x) => x.seq),
      'PC-AUDITOR-01': entries.filter((x) => x.role === 'auditor').map((x) => x.seq),
    };
    expect(expected['PC-CHANGE-01']).toHaveLength(3);
    expect(expected['PC-OVERSIGHT-01']).toHaveLength(2);
    expect(expected['PC-AUDITOR-01']!.length).toBeGreaterThan(0);
    for (const [control, seqs] of Object.entries(expected)) {
      const e = await evidenceOf(t, admin, control);
      expect(e.kind, control).toBe('audit_activity');
      expect(e.status, control).toBe('Satisfied');
      expect(figure(e.summary, /^(\d+) entr/), control).toBe(seqs.length);
      const first = Math.min(...seqs);
      const last = Math.max(...seqs);
      expect(e.pointers, control).toEqual([
        {
          type: 'audit_seq',
          ref: first === last ? String(first) : `${first}-${last}`,
          detail: `${seqs.length} entries, e.g. seq ${[...seqs]
            .sort((a, b) => a - b)
            .slice(0, 5)
            .join(', ')}`,
        },
      ]);
    }
  });
});

describe('GET /auth/keys and the key kinds', () => {
  /** Active keys by the route: neither revoked nor expired. */
  const activeByRoute = async (t: PlatformTestApi, admin: string) =>
    (
      (await get(t, admin, '/auth/keys')) as {
        keys: Array<{
          id: string;
          name: string;
          role: string;
          created_at: string;
          expires_at?: string;
          revoked: boolean;
          expired: boolean;
        }>;
      }
    ).keys.filter((k) => !k.revoked && !k.expired);

  it('role_assigned (PC-AUTH-02 auditor, PC-AUTH-03 admin) names the active keys of the role that GET /auth/keys lists', async () => {
    const clock = fixedClock(new Date());
    const { t, admin } = await start({ clock });
    const create = async (name: string, role: 'admin' | 'auditor', expires_in?: string) =>
      (await t.deps.keys.create({ name, role, ...(expires_in === undefined ? {} : { expires_in }) })).id;
    const revoked = await create('former-admin', 'admin');
    await create('external-auditor', 'auditor', '2d');
    const rotated = await create('internal-auditor', 'auditor', '1d');
    expect((await t.request('DELETE', `/auth/keys/${revoked}`, { token: admin })).status).toBe(200);
    expect(
      (await t.request('POST', `/auth/keys/${rotated}/rotate`, { token: admin, body: { expires_in: '1d' } }))
        .status,
    ).toBe(200);

    const check = async () => {
      const active = await activeByRoute(t, admin);
      for (const [control, role] of [
        ['PC-AUTH-02', 'auditor'],
        ['PC-AUTH-03', 'admin'],
      ] as const) {
        const names = active
          .filter((k) => k.role === role)
          .map((k) => k.name)
          .sort();
        const e = await evidenceOf(t, admin, control);
        expect(refs(e, 'api_key'), control).toEqual(names);
        expect(e.status, control).toBe(names.length > 0 ? 'Satisfied' : 'Unsatisfied');
        if (names.length > 0)
          expect(figure(e.summary, /held by (\d+) active API key/), control).toBe(names.length);
      }
      return active;
    };
    expect((await check()).filter((k) => k.role === 'auditor')).toHaveLength(2);
    clock.advance(1.5 * DAY_MS); // the rotated internal-auditor key expires
    expect((await check()).filter((k) => k.role === 'auditor')).toHaveLength(1);
    clock.advance(DAY_MS); // and the external one
    expect((await check()).filter((k) => k.role === 'auditor')).toHaveLength(0);
  });

  it('key_expiry (PC-AUTH-04) counts the active keys, and those living too long, that GET /auth/keys lists', async () => {
    const { t, admin } = await start();
    const ids: Record<string, string> = {};
    for (const [name, expires_in] of [
      ['ninety-days', '90d'],
      ['a-year', '365d'],
      ['forever', undefined],
      ['too-long', '400d'],
      ['revoked-forever', undefined],
    ] as const)
      ids[name] = (
        await t.deps.keys.create({
          name,
          role: 'operator',
          ...(expires_in === undefined ? {} : { expires_in }),
        })
      ).id;
    expect((await t.request('DELETE', `/auth/keys/${ids['revoked-forever']}`, { token: admin })).status).toBe(
      200,
    );

    const check = async () => {
      const active = await activeByRoute(t, admin);
      const tooLong = active
        .filter(
          (k) =>
            k.expires_at === undefined ||
            (Date.parse(k.expires_at) - Date.parse(k.created_at)) / DAY_MS > 365,
        )
        .map((k) => k.name)
        .sort();
      const e = await evidenceOf(t, admin, 'PC-AUTH-04');
      if (tooLong.length > 0) {
        expect(e.status).toBe('Unsatisfied');
        expect(e.summary).toMatch(new RegExp(`^${tooLong.length} of ${active.length} active API keys`));
        expect(refs(e, 'api_key')).toEqual(tooLong);
      } else {
        expect(e.status).toBe('Satisfied');
        expect(e.summary).toBe(`All ${active.length} active API keys expire within 365 days of issue.`);
        expect(refs(e, 'api_key')).toEqual(active.map((k) => k.name).sort());
      }
      return tooLong;
    };
    expect(await check()).toEqual(['forever', 'too-long']);
    for (const name of ['forever', 'too-long'])
      expect((await t.request('DELETE', `/auth/keys/${ids[name]}`, { token: admin })).status).toBe(200);
    expect(await check()).toEqual([]);
  });
});

describe('GET /catalog/installed and the package kinds', () => {
  const packageRecord = (
    name: string,
    type: InstalledPackageRecord['type'],
    source: 'registry' | 'path',
  ): InstalledPackageRecord => {
    const at = new Date().toISOString();
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
  };
  // Written to the store as an install leaves them: a registry install needs a signed registry.
  const seed = async (t: PlatformTestApi) => {
    const packages = catalogCollections(t.deps.store).packages;
    await packages.insert(packageRecord('claims-intake', 'agent-template', 'registry'));
    await packages.insert(packageRecord('fnol-triage', 'competency', 'registry'));
    await packages.insert(packageRecord('local-helper', 'skill', 'path'));
  };
  const installed = async (t: PlatformTestApi, admin: string) =>
    (
      (await get(t, admin, '/catalog/installed')) as {
        packages: Array<{ name: string; version: string; type: string; source: string }>;
      }
    ).packages;

  it('package_inventory (PC-PKG-01) lists the packages, and counts the agents, that GET /catalog/installed lists', async () => {
    const { t, admin } = await start();
    expect(await installed(t, admin)).toEqual([]);
    expect((await evidenceOf(t, admin, 'PC-PKG-01')).status).toBe('Unknown');
    await seed(t);
    const listed = await installed(t, admin);
    const e = await evidenceOf(t, admin, 'PC-PKG-01');
    expect(e.status).toBe('Satisfied');
    expect(refs(e, 'package')).toEqual(listed.map((p) => `${p.name}@${p.version}`).sort());
    expect(
      e.pointers.filter((p) => p.type === 'package').map((p) => p.detail!.split(', ').slice(0, 2)),
    ).toEqual([...listed].sort((a, b) => (a.name < b.name ? -1 : 1)).map((p) => [p.type, p.source]));
    expect(figure(e.summary, /^(\d+) installed package/)).toBe(listed.length);
    expect(figure(e.summary, /\((\d+) agent/)).toBe(listed.filter((p) => p.type === 'agent-template').length);
  });

  it('packages_signed (PC-PKG-02) names the packages GET /catalog/installed shows as not from the registry', async () => {
    const { t, admin } = await start();
    await seed(t);
    const listed = await installed(t, admin);
    const unsigned = listed.filter((p) => p.source !== 'registry');
    expect(unsigned).toHaveLength(1);
    const e = await evidenceOf(t, admin, 'PC-PKG-02');
    expect(e.status).toBe('Unsatisfied');
    expect(e.summary).toMatch(new RegExp(`^${unsigned.length} of ${listed.length} installed packages`));
    expect(refs(e, 'package')).toEqual(unsigned.map((p) => `${p.name}@${p.version}`).sort());

    await catalogCollections(t.deps.store).packages.delete('local-helper');
    const signed = await installed(t, admin);
    expect(signed.every((p) => p.source === 'registry')).toBe(true);
    const after = await evidenceOf(t, admin, 'PC-PKG-02');
    expect(after.status).toBe('Satisfied');
    expect(after.summary).toMatch(
      new RegExp(`^All ${signed.length} installed packages came from the registry`),
    );
    expect(refs(after, 'package')).toEqual(signed.map((p) => `${p.name}@${p.version}`).sort());
  });
});

describe('GET /licence/status and the licence kinds', () => {
  /** The budgets the route shows capped, in the evidence's words and order. */
  const capsOf = (status: {
    transaction_utilization: Record<string, { budget: number | null }>;
    cloud_spend: { budget_usd: number } | null;
    provider_entitlements: Array<{ provider_id: string; budget_usd: number | null }>;
  }) => [
    ...Object.entries(status.transaction_utilization)
      .filter(([, u]) => u.budget !== null)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([type, u]) => `${type}: ${u.budget} transactions`),
    ...(status.cloud_spend === null ? [] : [`cloud spend: ${status.cloud_spend.budget_usd} USD`]),
    ...status.provider_entitlements
      .filter((e) => e.budget_usd !== null)
      .map((e) => `${e.provider_id}: ${e.budget_usd} USD`),
  ];

  it('licence_budgets (PC-LIC-01) states the carrier, expiry and capped budgets GET /licence/status shows', async () => {
    const licences: Array<LicenceClaims | null> = [
      licenceClaims({
        transaction_budgets: { claims_intake: 1000, servicing: null, fnol: 50 },
        cloud_spend_usd: 500,
        provider_entitlements: [
          { provider_id: 'fake', budget_usd: 100 },
          { provider_id: 'open', budget_usd: null },
        ],
      }),
      licenceClaims({ transaction_budgets: { servicing: null } }),
      licenceClaims({ exp: Math.floor(Date.now() / 1000) - 60, transaction_budgets: { claims_intake: 10 } }),
      null,
    ];
    for (const licence of licences) {
      const { t, admin } = await start({ licence });
      const status = await get(t, admin, '/licence/status');
      const e = await evidenceOf(t, admin, 'PC-LIC-01');
      if (status.status === 'no_licence') {
        expect(licence).toBeNull();
        expect(e.status).toBe('Unsatisfied');
        expect(e.summary).toMatch(/^No licence is loaded/);
        continue;
      }
      expect(e.pointers).toEqual([
        { type: 'licence', ref: status.carrier_id, detail: `expires ${status.expires_at}` },
      ]);
      const caps = capsOf(status);
      if (status.status === 'expired') {
        expect(e.status).toBe('Unsatisfied');
        expect(e.summary).toBe(`The licence of ${status.carrier_name} expired on ${status.expires_at}.`);
      } else if (caps.length === 0) {
        expect(e.status).toBe('Unsatisfied');
        expect(e.summary).toMatch(/^The licence caps no budget/);
      } else {
        expect(e.status).toBe('Satisfied');
        expect(e.summary).toBe(
          `The signed licence of ${status.carrier_name} is valid until ${status.expires_at} and enforces: ${caps.join(', ')}.`,
        );
      }
    }
  });

  it('provider_inventory (PC-VENDOR-01) names the providers GET /providers lists, each with the bound GET /licence/status shows', async () => {
    const provider = (id: string) => ({
      id,
      kind: 'openai' as const,
      base_url: `http://127.0.0.1:9/${id}/v1`,
      models: ['m'],
    });
    const setups: StartPlatformTestApiOptions[] = [
      {
        config: { providers: [provider('fake'), provider('spare')] },
        licence: licenceClaims({
          cloud_spend_usd: 500,
          provider_entitlements: [{ provider_id: 'fake', budget_usd: 100 }],
        }),
      },
      {
        config: { providers: [provider('fake'), provider('open')] },
        licence: licenceClaims({
          provider_entitlements: [
            { provider_id: 'fake', budget_usd: 100 },
            { provider_id: 'open', budget_usd: null },
          ],
        }),
      },
      {
        // An entitlement without a budget under a cloud-spend cap: the cap bounds it (the gate refuses past it).
        config: { providers: [provider('open')] },
        licence: licenceClaims({
          cloud_spend_usd: 200,
          provider_entitlements: [{ provider_id: 'open', budget_usd: null }],
          providers: { local: true, managed_cloud: false },
        }),
      },
      {
        config: { providers: [provider('fake')] },
        licence: licenceClaims({ providers: { local: true, managed_cloud: false } }),
      },
      { config: {} },
    ];
    for (const setup of setups) {
      const { t, admin } = await start(setup);
      const cloud = (
        (await get(t, admin, '/providers')) as {
          providers: Array<{ id: string; kind: string; base_url?: string }>;
        }
      ).providers.filter((p) => p.id !== 'local');
      const licence = await get(t, admin, '/licence/status');
      const e = await evidenceOf(t, admin, 'PC-VENDOR-01');
      if (cloud.length === 0) {
        expect(e.status).toBe('Satisfied');
        expect(e.summary).toMatch(/^Only the built-in local model is configured/);
        continue;
      }
      expect(e.pointers).toEqual(
        cloud.map((p) => ({
          type: 'config',
          ref: `providers.${p.id}`,
          detail: `${p.kind} ${new URL(p.base_url!).host}`,
        })),
      );
      const entitlements = licence.provider_entitlements as Array<{
        provider_id: string;
        budget_usd: number | null;
      }>;
      // The bound of each provider as docs/licence.md "Enforcement" reads the route's figures: allowed
      // with an entitlement or managed_cloud; capped by its entitlement's budget, else by cloud_spend,
      // which every non-local provider's spend counts toward, entitlement or not.
      const bounds = cloud.map((p) => {
        const entitlement = entitlements.find((x) => x.provider_id === p.id);
        if (entitlement === undefined && !licence.providers.managed_cloud)
          return `${p.id} (not allowed by the licence (calls refused))`;
        if (entitlement !== undefined && entitlement.budget_usd !== null)
          return `${p.id} (${entitlement.budget_usd} USD entitlement)`;
        if (licence.cloud_spend !== null)
          return `${p.id} (managed-cloud budget of ${licence.cloud_spend.budget_usd} USD)`;
        return null;
      });
      const unbounded = cloud.filter((_, i) => bounds[i] === null).map((p) => p.id);
      if (unbounded.length > 0) {
        expect(e.status).toBe('Unsatisfied');
        expect(e.summary).toBe(`Spend on ${unbounded.join(', ')} is not capped by the licence.`);
      } else {
        expect(e.status).toBe('Satisfied');
        expect(e.summary).toBe(
          `${cloud.length} third-party model provider${cloud.length === 1 ? '' : 's'}, each bounded: ${bounds.join(', ')}.`,
        );
      }
    }
  });
});

describe('the vault and workflow kinds', () => {
  it('vault_in_use (PC-VAULT-01) lists the credentials GET /vault lists, with their stored_at', async () => {
    const { t, admin } = await start();
    expect(await get(t, admin, '/vault')).toEqual([]);
    expect((await evidenceOf(t, admin, 'PC-VAULT-01')).status).toBe('Unknown');
    for (const key of ['openai-key', 'crm-token', 'smtp-password'])
      expect(
        (await t.request('PUT', `/vault/${key}`, { token: admin, body: { value: 'secret' } })).status,
      ).toBe(200);
    expect((await t.request('DELETE', '/vault/crm-token', { token: admin })).status).toBe(204);
    const listed = (await get(t, admin, '/vault')) as Array<{ key: string; stored_at: string }>;
    const e = await evidenceOf(t, admin, 'PC-VAULT-01');
    expect(e.status).toBe('Satisfied');
    expect(figure(e.summary, /^(\d+) credential/)).toBe(listed.length);
    expect(e.pointers).toEqual(
      [...listed]
        .sort((a, b) => (a.key < b.key ? -1 : 1))
        .map((v) => ({ type: 'vault_key', ref: v.key, detail: `stored ${v.stored_at}` })),
    );
  });

  it('human_escalation (PC-WF-01) counts the runs GET /runs lists, and the Escalated ones GET /runs?state=Escalated lists', async () => {
    const { t, admin } = await start();
    const runs = workflowRuns(t.deps.store);
    // Written as the workflow engine leaves them: a real Escalated run needs a restart mid-write
    // (apps/platform/src/workflows/run-recovery.test.ts). None Running: recovery would pick it up.
    const insert = (n: number, state: WorkflowRunRecord['state']) => {
      const at = new Date(Date.UTC(2026, 0, 1, 0, n)).toISOString();
      const record: WorkflowRunRecord = {
        id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
        workflow_id: 'wf-1',
        workflow_name: 'claims-review',
        input: 'x',
        state,
        step_results: [],
        output: null,
        error: null,
        started_at: at,
        completed_at: at,
        definition: { version: '1', steps: [], variables: {} },
        progress: { cursor: 0, input: 'x', variables: {}, group: null },
        pending: {},
        check_at: null,
        transaction: null,
        workflow_type: 'claims_intake',
        started_by: 'test',
        finalized: true,
        updated_at: at,
      };
      return runs.insert(record);
    };
    const check = async () => {
      const all = ((await get(t, admin, '/runs?limit=1000')) as { runs: Array<{ id: string }> }).runs;
      const escalated = (
        (await get(t, admin, '/runs?state=Escalated&limit=1000')) as { runs: Array<{ id: string }> }
      ).runs;
      const e = await evidenceOf(t, admin, 'PC-WF-01');
      if (escalated.length === 0) {
        expect(e.status).toBe('Unknown');
        expect(figure(e.summary, /\((\d+) runs? in all\)/)).toBe(all.length);
        return;
      }
      expect(e.status).toBe('Satisfied');
      expect(e.summary).toBe(
        `${escalated.length} of ${all.length} workflow run${all.length === 1 ? '' : 's'} (${((escalated.length / all.length) * 100).toFixed(1)}%) escalated to a human.`,
      );
      expect(refs(e, 'workflow_run')).toEqual(escalated.map((r) => r.id).sort());
    };
    await check();
    await insert(1, 'Completed');
    await insert(2, 'Failed');
    await check();
    await insert(3, 'Escalated');
    await insert(4, 'Completed');
    await insert(5, 'Escalated');
    await insert(6, 'Suspended');
    await check();
  });
});
