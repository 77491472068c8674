import { cp, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@agent-platform/testkit';
import { stringify } from 'smol-toml';
import { afterAll, describe, expect, it } from 'vitest';
import { writeLicence } from '../support/fleet.ts';
import { call, restartPlatform, startPlatform, type PlatformProcess } from '../support/platform-process.ts';
import { readmeCommands } from '../support/readme-shell.ts';
import { createWalkthrough, type Walkthrough } from '../support/readme-walkthrough.ts';

// README "The package registry: publish, search, install by name, revoke", run command by
// command as the README writes them (tests/support/readme-walkthrough.ts): a registry started
// alone from its own config file, its first key made and kept by the CLI, the examples published
// with the CLI from a copy of examples/ (which must not change), found by the CLI and by
// GET /search, the platform of the tour pointed at the registry and restarted, claims-intake
// installed by name with its dependencies, a security yank through the CLI suspending the agent
// within revocation_poll_secs, activation refused, and the operator's override. Every `# =>`
// answer of the section is checked against what the command printed; the assertions below add
// what a user would notice besides.
const SECTION = 'The package registry: publish, search, install by name, revoke';
const EXAMPLES = fileURLToPath(new URL('../../examples', import.meta.url));

let dir: string | undefined;
let platform: PlatformProcess | undefined;
let walkthrough: Walkthrough | undefined;

afterAll(async () => {
  platform?.kill();
  for (const p of walkthrough?.processes ?? []) p.kill();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** Every file under `root` with its bytes, by relative path. */
async function snapshot(root: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    files[relative(root, path)] = (await readFile(path)).toString('base64');
  }
  return files;
}

describe('README package registry walkthrough', () => {
  it('a registry alone, publish with the CLI, search, install by name with dependencies, a security yank suspends the agent, override', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ap-registry-tour-'));
    const home = join(dir, 'home');
    await mkdir(home);
    await cp(EXAMPLES, join(dir, 'examples'), { recursive: true });
    const [registryPort, apiPort] = [await freePort(), await freePort()];

    // The tour's platform: its first-run config (a licence of its own instead of the development
    // one, a free port instead of 4200), the first admin key through the bootstrap rule.
    const data = join(dir, '.agent-platform');
    await mkdir(data);
    const config = {
      server: { listen: `127.0.0.1:${apiPort}` },
      storage: { data_dir: './.agent-platform' },
      auth: { mode: 'local' },
      licence: await writeLicence(data, {}),
      network: { allow_private_targets: true },
    };
    await writeFile(join(dir, 'agent-platform.toml'), stringify(config));
    platform = startPlatform(dir);
    const B = await platform.listening(90_000);
    const admin = await call(B, 'POST', '/auth/keys', { body: { name: 'admin', role: 'admin' } });
    expect(admin.status, admin.text).toBe(200);
    const token: string = admin.body.secret;

    const w = createWalkthrough(await readmeCommands(SECTION), {
      dir,
      home,
      addresses: { '127.0.0.1:4210': `127.0.0.1:${registryPort}`, '127.0.0.1:4200': `127.0.0.1:${apiPort}` },
      vars: { B, H: `Authorization: Bearer ${token}` },
      async startPlatform() {
        platform = await restartPlatform(platform!, dir!);
        return platform.output();
      },
    });
    walkthrough = w;

    // The registry, alone, from the README's registry.toml.
    await w.next("cat > registry.toml <<'TOML'");
    const toml = await readFile(join(dir, 'registry.toml'), 'utf8');
    expect(toml).toContain('mode = "local"');
    await w.next('npm start -w apps/registry -- --config "$PWD/registry.toml"');
    const registry = w.processes[0]!;
    // Its own data directory, beside the config file: the signing key it made at first start.
    expect((await stat(join(dir, '.agent-platform-registry', 'registry', 'signing-key.pem'))).mode & 0o777).toBe(0o600);
    await w.next('R=');
    const R = w.vars.R!;
    expect(R).toBe(`http://127.0.0.1:${registryPort}`);
    await w.next('curl -s $R/health');

    // The first registry key needs no credential, once; the CLI keeps it (mode 0600).
    const key = await w.next('curl -s -X POST $R/keys');
    const regKey: string = key.json.secret;
    expect((await call(R, 'POST', '/keys', { body: { name: 'again', role: 'registry-admin' } })).status).toBe(401);
    await w.next('export REG_KEY=', { value: regKey });
    await w.next('printf %s "$REG_KEY" | npm run cli -- registry login');
    const credentials = join(home, '.config', 'agent-platform', 'credentials.json');
    expect(JSON.parse(await readFile(credentials, 'utf8'))).toEqual({ registry: R, key: regKey });
    expect((await stat(credentials)).mode & 0o777).toBe(0o600);

    // Publishing builds in a temporary directory: the examples are left as they are.
    const before = await snapshot(join(dir, 'examples'));
    expect(before).toEqual(await snapshot(EXAMPLES));
    const published = [];
    for (const name of ['loss-summary', 'fnol-triage', 'claims-intake', 'policy-servicing'])
      published.push(await w.next(`npm run cli -- package publish examples/${name}`));
    expect(await snapshot(join(dir, 'examples'))).toEqual(before);
    const signingKey = await w.next('curl -s $R/signing-key');
    // The key id each publish printed is the registry's (what the README tells you to compare).
    for (const p of published) expect(p.text).toContain(`signed by registry key ${signingKey.json.key_id}`);
    expect((await call(R, 'GET', '/packages/claims-intake')).body).toMatchObject({ owners: ['key:registry-admin'], latest: '1.0.0' });

    // Found by the CLI and by GET /search.
    await w.next('npm run cli -- package search claims');
    const found = await w.next('curl -s "$R/search?q=claims&category=insurance/claims"');
    expect(found.json.results.map((r: { name: string }) => r.name)).toEqual(['claims-intake', 'fnol-triage', 'loss-summary']);
    await w.next('curl -s $R/packages/claims-intake/history');

    // The platform trusts the registry's key, and restarts.
    await w.next('TRUSTED=', { value: signingKey.json.public_key });
    await w.next('cat >> agent-platform.toml <<TOML');
    await w.next('npm start');
    expect(platform.output()).toContain('watching the registry revocation feed');

    // Search through the platform; install by name: the dependency chain first, from the registry.
    await w.next('curl -s -H "$H" "$B/catalog/search?q=claims"');
    const install = await w.next('curl -s -H "$H" -X POST $B/catalog/install');
    expect(install.json.installed.map((p: { name: string }) => p.name)).toEqual(['loss-summary', 'fnol-triage', 'claims-intake']);
    const agent: string = install.json.installed[2].id;
    await w.next('AGENT=', { value: agent });
    const installed = await w.next('curl -s -H "$H" $B/catalog/installed');
    expect(installed.json.packages.map((p: { name: string; source: string; revoked: boolean }) => [p.name, p.source, p.revoked])).toEqual([
      ['claims-intake', 'registry', false],
      ['fnol-triage', 'registry', false],
      ['loss-summary', 'registry', false],
    ]);
    await w.next('curl -s -H "$H" -X POST $B/agents/$AGENT/send');
    expect((await call(B, 'GET', `/agents/${agent}`, { token })).body.state).toBe('Running');

    // The security yank: the agent is Suspended within revocation_poll_secs (5 s; generous here).
    await w.next('npm run cli -- package yank claims-intake 1.0.0');
    await w.next('curl -s -H "$H" $B/agents/$AGENT', { untilMs: 60_000 });
    await w.next('curl -s -H "$H" $B/catalog/installed');
    await w.next('curl -s -H "$H" -X POST $B/agents/$AGENT/activate');
    const audit = await w.next('curl -s -H "$H" "$B/security/audit?category=agents&limit=5"');
    expect(audit.json.entries).toContainEqual(
      expect.objectContaining({
        action: 'package.revoked',
        target: 'claims-intake@1.0.0',
        result: 'applied',
        identity: `registry:${signingKey.json.key_id}`,
        role: 'system',
      }),
    );
    await w.next('npm run cli -- package search claims');
    // New installs skip the yanked version; a message to the suspended agent is refused.
    const again = await call(B, 'POST', '/catalog/install', { token, body: { name: 'claims-intake', activate: true } });
    expect(again.status).toBe(400);
    expect(again.body.error.category).toBe('CatalogError');
    const refused = await call(B, 'POST', `/agents/${agent}/send`, { token, body: { message: 'still there?' } });
    expect(refused.body.error.category).toBe('InvalidState');

    // The operator's override allows activating again; the agent runs and answers.
    await w.next('curl -s -H "$H" -X POST $B/catalog/installed/claims-intake/override-revocation');
    expect((await call(B, 'GET', `/agents/${agent}`, { token })).body.state).toBe('Suspended');
    await w.next('curl -s -H "$H" -X POST $B/agents/$AGENT/activate');
    await w.next('curl -s -H "$H" $B/agents/$AGENT');
    expect((await call(B, 'POST', `/agents/${agent}/send`, { token, body: { message: 'back' } })).body.content).toBe('back');

    // The whole section ran; no key in any process's output.
    expect(w.remaining()).toEqual([]);
    for (const output of [registry.output(), platform.output()]) {
      expect(output).not.toContain(regKey);
      expect(output).not.toContain(token);
    }
  }, 420_000);
});
