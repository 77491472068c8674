import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runFirstRunSetup } from '@agent-platform/config';
import { freePort, waitUntil } from '@agent-platform/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { call, restartPlatform, startPlatform, type PlatformProcess } from '../support/platform-process.ts';
import { readmeCommands } from '../support/readme-shell.ts';
import { createWalkthrough, type Walkthrough } from '../support/readme-walkthrough.ts';

// Issue 13, "done means": README "Governance: ..." run command by command as written
// (tests/support/readme-walkthrough.ts), from the state the tour leaves: the first-run files, the
// platform on them with the admin key and claims-intake installed. The development OpenID provider
// started with `npm run dev:oidc`, the platform restarted in mode oidc, a client credentials token
// from the provider used on /auth/whoami; a message with a policy number and an email tokenised on
// its way to the model (traffic, audit, coverage); a checkpoint, three audit entries cut with
// `node -e` and better-sqlite3, verify failing on the checkpoint, a superseding checkpoint; a full
// backup, the platform shut down, the CLI restoring it into a new data dir, a platform on that dir
// answering the old key and token with a trail that verifies. Every `# =>` answer is checked; the
// assertions below add what a user would notice besides.
const SECTION =
  'Governance: sign in with OpenID, personal data tokenised, a cut audit trail caught, a backup restored';
const EXAMPLE = fileURLToPath(new URL('../../examples/claims-intake', import.meta.url));
const POLICY = 'POL-4417283';
const EMAIL = 'dana.reyes@example.com';

let dir: string | undefined;
let platform: PlatformProcess | undefined;
let walkthrough: Walkthrough | undefined;

afterAll(async () => {
  platform?.kill();
  for (const p of walkthrough?.processes ?? []) p.kill();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** The checkpoint objects in the sink (not latest.json), oldest first. */
async function checkpointFiles(sink: string): Promise<string[]> {
  return (await readdir(join(sink, 'checkpoints')).catch(() => [] as string[]))
    .filter((n) => n.endsWith('.json'))
    .sort();
}

describe('README governance walkthrough', () => {
  it('OIDC sign-in, a tokenised message, a cut audit trail caught by its checkpoint, a backup restored into a new data dir', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ap-governance-tour-'));
    const home = join(dir, 'home');
    await mkdir(home);
    const [apiPort, oidcPort] = [await freePort(), await freePort()];

    // What the tour left: the first-run files as `npm start` writes them (on a free port instead
    // of 4200), the platform on them, the first admin key, claims-intake installed and active.
    await runFirstRunSetup({ cwd: dir, env: {}, log: () => undefined });
    const firstRun = join(dir, 'agent-platform.toml');
    await writeFile(
      firstRun,
      (await readFile(firstRun, 'utf8')).split('127.0.0.1:4200').join(`127.0.0.1:${apiPort}`),
    );
    platform = startPlatform(dir);
    const B = await platform.listening(90_000);
    const admin = await call(B, 'POST', '/auth/keys', { body: { name: 'admin', role: 'admin' } });
    expect(admin.status, admin.text).toBe(200);
    const key: string = admin.body.secret;
    const install = await call(B, 'POST', '/catalog/install', {
      token: key,
      body: { path: EXAMPLE, activate: true },
    });
    expect(install.status, install.text).toBe(201);
    const agent: string = install.body.installed.at(-1).id;

    const w = createWalkthrough(await readmeCommands(SECTION), {
      dir,
      home,
      addresses: {
        '127.0.0.1:4200': `127.0.0.1:${apiPort}`,
        '127.0.0.1:4300': `127.0.0.1:${oidcPort}`,
        '--port 4300': `--port ${oidcPort}`,
      },
      vars: { B, H: `Authorization: Bearer ${key}`, AGENT: agent },
      async startPlatform(args) {
        platform = await restartPlatform(platform!, dir!, args);
        return platform.output();
      },
    });
    walkthrough = w;

    // 1. The development OpenID provider, the platform in mode oidc, a token, whoami.
    await w.next('npm run dev:oidc -- --port 4300 --audience http://127.0.0.1:4200');
    const provider = w.processes[0]!;
    let secret: string | undefined;
    await waitUntil(
      () => (secret = /client secret \(every client\): (\S+)/.exec(provider.output())?.[1]) !== undefined,
      {
        timeoutMs: 10_000,
        message: `the provider to print its client secret (${provider.output()})`,
      },
    );
    await w.next('OIDC_SECRET=', { value: secret! });
    await w.next("cat > governance.toml <<'TOML'");
    await w.next('npm start -- --config governance.toml');
    expect(platform.output()).not.toContain('First run');
    const issued = await w.next('curl -s -u platform-admin:$OIDC_SECRET -d grant_type=client_credentials');
    const token: string = issued.json.access_token;
    await w.next('export TOKEN=', { value: token });
    await w.next('O=');
    await w.next('curl -s -H "$O" $B/auth/whoami');
    const whoKey = await w.next('curl -s -H "$H" $B/auth/whoami');
    expect(whoKey.json.key_id).toBe(admin.body.id);
    // What the prose says besides: claims-analyst is an operator, a forged token is refused.
    const analyst = await fetch(`http://127.0.0.1:${oidcPort}/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`claims-analyst:${secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: `grant_type=client_credentials&resource=http://127.0.0.1:${apiPort}`,
    });
    const analystToken = ((await analyst.json()) as { access_token: string }).access_token;
    expect((await call(B, 'GET', '/auth/whoami', { token: analystToken })).body).toMatchObject({
      identity: 'oidc:claims-analyst',
      role: 'operator',
    });
    const forged = await call(B, 'GET', '/auth/whoami', { token: `${token.slice(0, -6)}AAAAAA` });
    expect(forged.status).toBe(401);
    expect(forged.body.error.category).toBe('AuthError');

    // 2. The privacy gateway: the reply has the values, the model got tokens.
    const sent = await w.next('curl -s -H "$O" -X POST $B/agents/$AGENT/send');
    const message = `Burst pipe in the kitchen, policy number ${POLICY}, reach me at ${EMAIL}`;
    const tokenised = message.replace(POLICY, '[[PII:POLICY:0000]]').replace(EMAIL, '[[PII:EMAIL:0000]]');
    // The echo counts what it received (D6): the tokenised text, not the message.
    expect(sent.json.tokens_used).toBe(2 * Math.ceil(tokenised.length / 4));
    expect(sent.json.tokens_used).toBe(46);
    expect(2 * Math.ceil(message.length / 4)).toBe(44); // what the README says the message itself would count
    await w.next('curl -s -H "$O" "$B/gateway/traffic?limit=1"');
    const privacy = await w.next('curl -s -H "$O" "$B/security/audit?category=privacy&limit=3"');
    expect(
      privacy.json.entries.every((e: { identity: string }) => e.identity === 'oidc:platform-admin'),
    ).toBe(true);
    await w.next('curl -s -H "$O" $B/compliance/pii-coverage');
    const traffic = await call(B, 'GET', '/gateway/traffic?limit=500', { token });
    const trail = await call(B, 'GET', '/security/audit?limit=500', { token });
    for (const text of [traffic.text, trail.text, platform.output()]) {
      expect(text).not.toContain(POLICY);
      expect(text).not.toContain(EMAIL);
    }

    // 3. A checkpoint, the last three entries cut, verify failing on it, superseding. The platform
    // also writes one on its own a minute after it starts (the hourly writer's first tick), which
    // a slow run may reach: the checks below hold against whichever checkpoint is the latest.
    const sink = join(dir, 'audit-sink');
    const latest = async () => JSON.parse(await readFile(join(sink, 'latest.json'), 'utf8')).checkpoint;
    const written = await w.next('curl -s -H "$O" -X POST $B/security/checkpoints');
    const recorded: number = written.json.checkpoint.entry_count;
    await w.next('node -e');
    const failed = await w.next('curl -s -H "$O" $B/security/verify');
    const [, has, had] = /the chain has (\d+) entries, the checkpoint of \S+ recorded (\d+)/.exec(
      failed.json.reason,
    )!;
    expect(Number(had)).toBe((await latest()).entry_count);
    expect(Number(had)).toBeGreaterThanOrEqual(recorded);
    expect(Number(has)).toBeLessThan(recorded);
    expect(failed.json.entry_count).toBe(Number(has));
    const beforeRefusal = await checkpointFiles(sink);
    await w.next('curl -s -H "$O" -X POST $B/security/checkpoints');
    expect(await checkpointFiles(sink)).toEqual(beforeRefusal);
    const superseding = await w.next('curl -s -H "$O" -X POST $B/security/checkpoints -H');
    expect(superseding.json.checkpoint.supersedes).toMatchObject({
      name: `checkpoints/${beforeRefusal.at(-1)}`,
      entry_count: Number(had),
    });
    await w.next('curl -s -H "$O" $B/security/verify');

    // 4. A full backup, the platform stopped, the CLI restoring into a new data dir.
    const backup = await w.next('curl -s -H "$O" -X POST $B/backup/create');
    await w.next('BACKUP=', { value: backup.json.id });
    await w.next('curl -s -H "$O" -X POST $B/shutdown');
    expect(await platform.exited).toBe(0);
    await w.next('npm run cli -- backup restore --data-dir restored-data');
    const restored = join(dir, 'restored-data');
    expect((await stat(join(restored, 'vault.key'))).mode & 0o777).toBe(0o600);
    expect(await readFile(join(restored, 'vault.key'), 'utf8')).toBe(
      await readFile(join(dir, '.agent-platform', 'vault.key'), 'utf8'),
    );
    await w.next("cat > restored.toml <<'TOML'");
    await w.next('npm start -- --config restored.toml');

    // The old key and the token work; the trail is the backup's plus the restore's, and verifies
    // against the superseding checkpoint signed by the key that was kept.
    await w.next('curl -s -H "$H" $B/auth/whoami');
    const verified = await w.next('curl -s -H "$O" $B/security/verify');
    expect(verified.json.checkpoint).toMatchObject({
      entry_count: (await latest()).entry_count,
      signature_valid: true,
    });
    expect(verified.json.checkpoint.entry_count).toBeGreaterThanOrEqual(
      superseding.json.checkpoint.entry_count,
    );
    expect(verified.json.entry_count).toBeGreaterThan(backup.json.audit_entry_count);
    const system = await w.next('curl -s -H "$O" "$B/security/audit?category=system&limit=2"');
    expect(system.json.entries[1].target).toBe(backup.json.id);
    await w.next('curl -s -H "$O" -X POST $B/agents/$AGENT/send');
    const fresh = await w.next('curl -s -H "$O" -X POST $B/security/checkpoints');
    expect(fresh.json.checkpoint.key_id).toBe(written.json.checkpoint.key_id);
    expect(existsSync(join(restored, 'audit-checkpoint-key.pem'))).toBe(false);
    const files = (await checkpointFiles(sink)).map((f) => `checkpoints/${f}`);
    expect(files).toEqual(
      expect.arrayContaining([written.json.name, superseding.json.name, fresh.json.name]),
    );
    // The restored data dir is the platform's now; the old one is as the backup left it.
    expect((await call(B, 'GET', '/config', { token })).text).toContain('restored-data');
    expect(existsSync(join(dir, '.agent-platform', 'platform.db'))).toBe(true);

    // The whole section ran; no credential in the platform's output.
    expect(w.remaining()).toEqual([]);
    for (const credential of [key, token, secret!]) expect(platform.output()).not.toContain(credential);
  }, 420_000);
});
