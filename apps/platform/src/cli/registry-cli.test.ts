import { cp, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadArchive } from '@agent-platform/packages';
import { EXAMPLES_DIR, exampleArchive, startFakeRegistry, type FakeRegistry } from '@agent-platform/registry-core/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCliHere, runCliProcess, type CliResult } from './testing/cli-runs.ts';

let dir: string;
let configDir: string;
let registry: FakeRegistry;
let others: FakeRegistry[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-registry-cli-'));
  configDir = join(dir, 'cli-config');
  registry = await startFakeRegistry();
});
afterEach(async () => {
  await registry.close();
  for (const other of others) await other.close();
  others = [];
  await rm(dir, { recursive: true, force: true });
});

/** runCli in-process with a test environment: the CLI config dir is a temp dir, never the real home. */
function cli(args: string[], options: { env?: Record<string, string>; stdin?: string } = {}): Promise<CliResult> {
  return runCliHere(args, { cwd: dir, env: { AP_CLI_CONFIG_DIR: configDir, ...options.env }, stdin: options.stdin ?? '' });
}

const credentials = () => join(configDir, 'credentials.json');

async function loggedIn(key = 'reg_sk_publisher'): Promise<void> {
  registry.acceptedKey = key;
  const res = await cli(['registry', 'login', '--registry', registry.url], { stdin: `${key}\n` });
  expect(res.code).toBe(0);
}

describe('agent-platform registry login / logout', () => {
  it('checks the key from stdin with the registry and stores it for that registry, readable by its owner only', async () => {
    registry.acceptedKey = 'reg_sk_publisher';
    const res = await cli(['registry', 'login', '--registry', `${registry.url}/`], { stdin: 'reg_sk_publisher\n' });
    expect(res).toMatchObject({ code: 0, stderr: '' });
    expect(res.stdout).toBe(`Logged in to ${registry.url} as publisher-1 (publisher); key stored in ${credentials()}\n`);
    expect(res.stdout).not.toContain('reg_sk_publisher');
    expect(JSON.parse(await readFile(credentials(), 'utf8'))).toEqual({ registry: registry.url, key: 'reg_sk_publisher' });
    expect((await stat(credentials())).mode & 0o777).toBe(0o600);
    expect((await stat(configDir)).mode & 0o777).toBe(0o700);
    expect(registry.requests.at(-1)).toMatchObject({ path: '/auth/whoami', authorization: 'Bearer reg_sk_publisher' });

    const out = await cli(['registry', 'logout']);
    expect(out).toMatchObject({ code: 0, stdout: `Logged out of ${registry.url}.\n` });
    await expect(stat(credentials())).rejects.toThrow();
    expect((await cli(['registry', 'logout'])).stdout).toBe('Not logged in to a registry.\n');
  });

  it('stores nothing when the registry refuses the key, the key is empty, or the command line is wrong', async () => {
    registry.acceptedKey = 'reg_sk_right';
    const refused = await cli(['registry', 'login', '--registry', registry.url], { stdin: 'reg_sk_wrong\n' });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('GET /auth/whoami answered 401: AuthError: a registry key is required; nothing was stored');
    expect(refused.stderr).not.toContain('reg_sk_wrong');
    expect((await cli(['registry', 'login', '--registry', registry.url], { stdin: '\n' })).code).toBe(1);
    const argv = await cli(['registry', 'login', '--registry', registry.url, 'reg_sk_right']);
    expect(argv.code).toBe(2);
    expect(argv.stderr).toContain('never from the command line');
    expect((await cli(['registry', 'login'])).code).toBe(2);
    expect((await cli(['registry', 'login', '--registry', 'ftp://x'])).code).toBe(2);
    await expect(stat(credentials())).rejects.toThrow();
  });

  it('reads the key from the standard input of the real process', async () => {
    registry.acceptedKey = 'reg_sk_piped';
    const res = await runCliProcess(['registry', 'login', '--registry', registry.url], {
      cwd: dir,
      env: { AP_CLI_CONFIG_DIR: configDir },
      stdin: 'reg_sk_piped\n',
    });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(JSON.parse(await readFile(credentials(), 'utf8'))).toEqual({ registry: registry.url, key: 'reg_sk_piped' });
    expect((await stat(credentials())).mode & 0o777).toBe(0o600);
  });
});

describe('agent-platform package publish', () => {
  it('builds a directory in a temp dir and sends the archive with the stored key to the stored registry', async () => {
    await loggedIn();
    const pkg = join(dir, 'loss-summary');
    await cp(join(EXAMPLES_DIR, 'loss-summary'), pkg, { recursive: true });
    await writeFile(join(pkg, 'README.md'), '# Loss summary\n\nWhat it writes for the adjuster.\n');
    const res = await cli(['package', 'publish', 'loss-summary']);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const published = registry.requests.at(-1);
    expect(published).toMatchObject({ method: 'POST', path: '/packages', content_type: 'application/gzip', authorization: 'Bearer reg_sk_publisher' });
    const sent = loadArchive(published?.body ?? Buffer.alloc(0));
    expect(sent.manifest.package).toMatchObject({ name: 'loss-summary', version: '1.0.0' });
    // The README beside package.toml travels in the archive (docs/packages.md "README").
    expect(sent.readme).toBe('# Loss summary\n\nWhat it writes for the adjuster.\n');
    expect(res.stdout).toContain(`Published loss-summary 1.0.0 to ${registry.url}\n  signed by registry key ${registry.signer.publicKey.key_id}\n`);
    await expect(stat(join(pkg, 'dist'))).rejects.toThrow();
  });

  it('sends an archive file as it is; --registry and AP_REGISTRY_KEY win, and a stored key never goes to another registry', async () => {
    await loggedIn('reg_sk_stored');
    const archive = await exampleArchive('fnol-triage', { version: '1.3.0' });
    await writeFile(join(dir, 'fnol-triage-1.3.0.tar.gz'), archive);
    const other = await startFakeRegistry();
    others.push(other);

    expect((await cli(['package', 'publish', 'fnol-triage-1.3.0.tar.gz', '--registry', other.url])).code).toBe(0);
    expect(other.requests.at(-1)).toMatchObject({ path: '/packages', authorization: undefined });
    expect(Buffer.compare(other.requests.at(-1)?.body ?? Buffer.alloc(0), Buffer.from(archive))).toBe(0);

    const keyed = await cli(['package', 'publish', 'fnol-triage-1.3.0.tar.gz'], { env: { AP_REGISTRY_URL: other.url, AP_REGISTRY_KEY: 'reg_sk_env' } });
    expect(keyed.code).toBe(0);
    expect(other.requests.at(-1)?.authorization).toBe('Bearer reg_sk_env');
  });

  it('fails clearly: no registry (2), a refused key (1), an invalid package (1)', async () => {
    const none = await cli(['package', 'publish', 'x.tar.gz']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no registry: pass --registry <url>, set AP_REGISTRY_URL, or run agent-platform registry login');

    registry.acceptedKey = 'reg_sk_right';
    await writeFile(join(dir, 'a.tar.gz'), await exampleArchive('loss-summary'));
    const refused = await cli(['package', 'publish', 'a.tar.gz', '--registry', registry.url]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`agent-platform package publish: registry ${registry.url}: POST /packages answered 401: AuthError: a registry key is required`);
    expect(refused.stderr).toContain('Run agent-platform registry login');

    const broken = join(dir, 'broken');
    await cp(join(EXAMPLES_DIR, 'loss-summary'), broken, { recursive: true });
    await writeFile(join(broken, 'package.toml'), (await readFile(join(broken, 'package.toml'), 'utf8')).replace('name = "loss-summary"', 'name = "Loss Summary"'));
    const invalid = await cli(['package', 'publish', 'broken', '--registry', registry.url]);
    expect(invalid.code).toBe(1);
    expect(invalid.stdout).toContain('nothing was published');
    expect(registry.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
  });
});

describe('agent-platform package yank and search', () => {
  it('yanks with a reason, as a security yank, and un-yanks', async () => {
    await loggedIn();
    registry.add(await exampleArchive('loss-summary'));
    const yank = await cli(['package', 'yank', 'loss-summary', '1.0.0', '--reason', 'leaks claimant data', '--security']);
    expect(yank).toMatchObject({ code: 0, stdout: `Yanked loss-summary 1.0.0 (security yank) on ${registry.url}: leaks claimant data\n` });
    const sent = registry.requests.at(-1);
    expect(sent).toMatchObject({ method: 'POST', path: '/packages/loss-summary/1.0.0/yank', authorization: 'Bearer reg_sk_publisher' });
    expect(JSON.parse(sent?.body.toString() ?? '')).toEqual({ reason: 'leaks claimant data', security: true, yanked: true });

    const undo = await cli(['package', 'yank', 'loss-summary', '1.0.0', '--reason', 'fixed upstream', '--undo']);
    expect(undo.stdout).toBe(`Un-yanked loss-summary 1.0.0 on ${registry.url}\n`);
    expect(JSON.parse(registry.requests.at(-1)?.body.toString() ?? '')).toEqual({ reason: 'fixed upstream', yanked: false });

    expect((await cli(['package', 'yank', 'loss-summary', '1.0.0'])).code).toBe(2);
    const missing = await cli(['package', 'yank', 'loss-summary', '9.9.9', '--reason', 'x']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('answered 404');
  });

  it('prints the hits as a table, passing the filters on', async () => {
    registry.add(await exampleArchive('claims-intake'));
    registry.add(await exampleArchive('fnol-triage'));
    registry.add(await exampleArchive('policy-servicing'));
    const res = await cli(['package', 'search', 'claims', '--category', 'insurance', '--registry', registry.url]);
    expect(res.code).toBe(0);
    expect(res.stdout).toBe(
      [
        'NAME           TYPE            LATEST  REGIONS  TITLE',
        'claims-intake  agent-template  1.0.0   all      Claims intake',
        'fnol-triage    competency      1.0.0   all      FNOL triage',
        '2 packages',
        '',
      ].join('\n'),
    );
    expect(registry.requests.at(-1)).toMatchObject({ path: '/search', query: { q: 'claims', category: 'insurance' } });
    const typed = await cli(['package', 'search', '--type', 'agent-template', '--registry', registry.url]);
    expect(typed.stdout.split('\n').slice(1, -2).map((l) => l.split(' ')[0])).toEqual(['claims-intake', 'policy-servicing']);
    expect((await cli(['package', 'search', 'nothing-like-this', '--registry', registry.url])).stdout).toBe('No packages match.\n');
    expect((await cli(['package', 'search', '--type', 'tool', '--registry', registry.url])).code).toBe(2);
  });
});
