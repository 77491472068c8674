import { mkdtemp, readdir, readFile, rm, stat, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LicenceClaims } from '@agent-platform/contracts';
import { importSPKI, jwtVerify } from 'jose';
import { Value } from 'typebox/value';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkBootGate } from './boot-gate.ts';
import { ConfigError } from './config-error.ts';
import { loadOrCreateConfig, runFirstRunSetup } from './first-run.ts';

const NOW = new Date('2026-11-01T00:00:00Z');
let cwd: string;
let lines: string[];
const options = () => ({ cwd, env: {}, log: (line: string) => lines.push(line), now: () => NOW });

beforeEach(async () => {
  cwd = await mkdtemp(join(tmpdir(), 'ap-first-run-'));
  lines = [];
});
afterEach(async () => {
  await rm(cwd, { recursive: true, force: true });
});

async function verifyLicence(licenceFile: string, publicKeyFile: string) {
  const key = await importSPKI(await readFile(publicKeyFile, 'utf8'), 'EdDSA');
  return (await jwtVerify((await readFile(licenceFile, 'utf8')).trim(), key, { currentDate: NOW })).payload;
}

describe('first-run setup', () => {
  it('writes a secured loopback config, a signing key pair and a 30-day development licence that verifies', async () => {
    const loaded = await runFirstRunSetup(options());
    const dataDir = join(cwd, '.agent-platform');
    expect(loaded.source).toBe('first-run');
    expect(loaded.path).toBe(join(cwd, 'agent-platform.toml'));
    expect(loaded.rawText).toBe(await readFile(join(cwd, 'agent-platform.toml'), 'utf8'));
    const { config } = loaded;
    expect(config.server.listen).toBe('127.0.0.1:4200');
    expect(config.auth.mode).toBe('local');
    expect(config.storage.data_dir).toBe(dataDir);
    expect(config.network.allow_private_targets).toBe(true);
    // Off, and one edit away: the file names the dashboard surface (docs/dashboard.md).
    expect(config.surfaces.dashboard).toBe(false);
    expect(loaded.rawText).toContain('[surfaces]\n# The web dashboard at http://127.0.0.1:4200/dashboard');
    expect(config.licence).toEqual({ file: join(dataDir, 'licence-dev.jwt'), public_key_file: join(dataDir, 'licence-dev-public.pem') });
    expect(checkBootGate(config)).toEqual({ ok: true });

    expect((await readdir(dataDir)).sort()).toEqual(['licence-dev-private.pem', 'licence-dev-public.pem', 'licence-dev.jwt']);
    if (process.platform !== 'win32') expect((await stat(join(dataDir, 'licence-dev-private.pem'))).mode & 0o777).toBe(0o600);

    const claims = await verifyLicence(config.licence.file!, config.licence.public_key_file!);
    expect(Value.Check(LicenceClaims, claims)).toBe(true);
    expect(claims).toMatchObject({ carrier_name: 'Development', carrier_id: 'dev-local', providers: { local: true, managed_cloud: false } });
    expect(claims.exp! - claims.iat!).toBe(30 * 86400);

    const printed = lines.join('\n');
    expect(printed).toContain(join(cwd, 'agent-platform.toml'));
    expect(printed).toContain(join(dataDir, 'licence-dev.jwt'));
    expect(printed).toContain('DEVELOPMENT licence');
    expect(printed).toContain('POST');
    expect(printed).toContain('http://127.0.0.1:4200/auth/keys');
  });

  it('writes once: a second start loads the same file and generates nothing', async () => {
    await runFirstRunSetup(options());
    const files = ['agent-platform.toml', '.agent-platform/licence-dev.jwt', '.agent-platform/licence-dev-private.pem'];
    const before = await Promise.all(files.map((f) => readFile(join(cwd, f), 'utf8')));
    lines = [];
    const again = await loadOrCreateConfig({ ...options(), argv: [] });
    expect(again.source).toBe('cwd');
    expect(lines).toEqual([]);
    expect(await Promise.all(files.map((f) => readFile(join(cwd, f), 'utf8')))).toEqual(before);
  });

  it('generates nothing when started with a config file', async () => {
    await writeFile(join(cwd, 'mine.toml'), '[auth]\nmode = "local"\n');
    const loaded = await loadOrCreateConfig({ ...options(), argv: ['--config', 'mine.toml'] });
    expect(loaded.source).toBe('flag');
    expect(await readdir(cwd)).toEqual(['mine.toml']);
    expect(lines).toEqual([]);
  });

  it('reuses development licence files left in the data dir instead of overwriting them', async () => {
    await runFirstRunSetup(options());
    const licence = await readFile(join(cwd, '.agent-platform/licence-dev.jwt'), 'utf8');
    await rm(join(cwd, 'agent-platform.toml'));
    await rm(join(cwd, '.agent-platform/licence-dev-public.pem'));
    lines = [];
    const loaded = await runFirstRunSetup(options());
    expect(await readFile(loaded.config.licence.file!, 'utf8')).toBe(licence);
    await expect(verifyLicence(loaded.config.licence.file!, loaded.config.licence.public_key_file!)).resolves.toMatchObject({ carrier_id: 'dev-local' });
    expect(lines.join('\n')).toContain('existing DEVELOPMENT licence reused');
  });

  it('refuses licence files whose private key is gone, rather than pairing them with a new key', async () => {
    await mkdir(join(cwd, '.agent-platform'));
    await writeFile(join(cwd, '.agent-platform/licence-dev.jwt'), 'stale');
    const error = await runFirstRunSetup(options()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems[0]).toContain('licence-dev.jwt: exists without licence-dev-private.pem');
    await expect(stat(join(cwd, 'agent-platform.toml'))).rejects.toThrow(/ENOENT/);
  });
});
