import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { call, startPlatform, type PlatformProcess } from '../support/platform-process.ts';

// The README's five-minute tour, run as a new user would: `npm start` in an empty directory
// (first-run setup, DECISIONS D1), the first admin key through the bootstrap rule, a key in the
// audit log, a verified chain, a secret in the vault, then a graceful stop and a restart on the
// same data dir with everything still there.
const EXAMPLE = fileURLToPath(new URL('../../examples/claims-intake', import.meta.url));
let dir: string | undefined;
let platform: PlatformProcess | undefined;

afterEach(async () => {
  platform?.kill();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('README tour against the all-in-one platform', () => {
  it('first run, key, audit, verify, vault, shutdown, restart', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ap-tour-'));
    platform = startPlatform(dir);
    const base = await platform.listening();
    expect(base).toBe('http://127.0.0.1:4200');
    expect(platform.output()).toContain('First run');
    expect(existsSync(join(dir, 'agent-platform.toml'))).toBe(true);
    expect(existsSync(join(dir, '.agent-platform', 'licence-dev.jwt'))).toBe(true);

    expect((await call(base, 'GET', '/health')).body.status).toBe('ok');
    expect((await call(base, 'GET', '/auth/whoami')).status).toBe(401);

    const created = await call(base, 'POST', '/auth/keys', { body: { name: 'admin', role: 'admin' } });
    expect(created.status).toBe(200);
    const token: string = created.body.secret;
    expect(token.startsWith('svc_sk_')).toBe(true);
    expect((await call(base, 'POST', '/auth/keys', { body: { name: 'again', role: 'admin' } })).status).toBe(401);

    const whoami = await call(base, 'GET', '/auth/whoami', { token });
    expect(whoami.body).toMatchObject({ identity: 'admin', role: 'admin', key_id: created.body.id });

    const audit = await call(base, 'GET', '/security/audit?category=keys', { token });
    expect(audit.body.entries.map((e: { action: string }) => e.action)).toContain('POST /auth/keys');

    const secretValue = 'tour-secret-5f1c9a';
    expect((await call(base, 'PUT', '/vault/claims-api-token', { token, body: { value: secretValue } })).status).toBe(200);
    const vault = await call(base, 'GET', '/vault', { token });
    expect(vault.body.map((e: { key: string }) => e.key)).toEqual(['claims-api-token']);
    expect(vault.text).not.toContain(secretValue);

    const verify = await call(base, 'GET', '/security/verify', { token });
    expect(verify.body.valid).toBe(true);
    const countBefore: number = verify.body.entry_count;

    // Install an agent and talk to it (README "Install an agent and talk to it").
    const install = await call(base, 'POST', '/catalog/install', { token, body: { path: EXAMPLE, activate: true } });
    expect(install.status).toBe(201);
    expect(install.body.installed.map((p: { name: string }) => p.name)).toEqual(['loss-summary', 'fnol-triage', 'claims-intake']);
    const agent: string = install.body.installed[2].id;
    const message = 'Water damage in the kitchen, policy HO-1234';
    const sent = await call(base, 'POST', `/agents/${agent}/send`, { token, body: { message } });
    expect(sent.body).toEqual({ content: message, tool_calls: [], tokens_used: 22 });
    const invocation = { source: 'Api', message: 'FNOL for claim 7', correlation_id: 'c-1', idempotency_key: 'fnol-7', workflow_type: 'claims_intake' };
    expect((await call(base, 'POST', `/agents/${agent}/invoke`, { token, body: invocation })).body.content).toBe('FNOL for claim 7');
    const repeat = await call(base, 'POST', `/agents/${agent}/invoke`, { token, body: invocation });
    expect(repeat.status).toBe(200);
    expect(repeat.body.error.category).toBe('DuplicateInvocation');
    expect((await call(base, 'GET', '/usage', { token })).body.total_requests).toBe(2);
    // The README's crash walkthroughs kill this platform by the pid GET /status names (never every
    // platform on the machine): it must be the process that serves the port.
    expect((await call(base, 'GET', '/status', { token })).body.pid).toBe(platform.child.pid);
    const licence = await call(base, 'GET', '/licence/status', { token });
    expect(licence.body.transaction_utilization.claims_intake).toEqual({ budget: null, used: 1, remaining: null });

    expect((await call(base, 'POST', '/shutdown', { token })).status).toBe(202);
    expect(await platform.exited).toBe(0);
    expect(platform.output()).not.toContain(secretValue);

    // Restart: the config file now exists, so nothing is generated again.
    platform = startPlatform(dir);
    const again = await platform.listening();
    expect(platform.output()).not.toContain('First run');
    expect((await call(again, 'GET', '/auth/whoami', { token })).status).toBe(200);
    const after = await call(again, 'GET', '/security/verify', { token });
    expect(after.body.valid).toBe(true);
    expect(after.body.entry_count).toBeGreaterThan(countBefore);
    expect((await call(again, 'GET', '/vault', { token })).body).toHaveLength(1);
    expect((await call(again, 'GET', `/agents/${agent}`, { token })).body).toMatchObject({ state: 'Running', tasks_completed: 2 });
    const config = await readFile(join(dir, 'agent-platform.toml'), 'utf8');
    expect(config).toContain('mode = "local"');

    platform.child.kill('SIGTERM');
    expect(await platform.exited).toBe(0);
  }, 120_000);
});
