import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fleetRecord } from '@agent-platform/domain';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from './config-error.ts';
import { agreeWithFleetAtBoot, licenceClaim, signingKeyClaim, vaultKeyClaim, type FleetBootCheckOptions } from './fleet-boot-check.ts';
import { createDevLicenceClaims, generateLicenceKeyPair, issueLicence } from './licence-keys.ts';
import { loadLicence } from './licence-loader.ts';
import { defaultConfig } from './validate-config.ts';

// The boot check as the compose roots call it, over one store file opened by two handles (two nodes).
let dir: string;
let nodeA: Store;
let nodeB: Store;
let lines: Array<{ level: string; fields: Record<string, unknown>; message: string }>;
const log = {
  info: (fields: Record<string, unknown>, message: string) => lines.push({ level: 'info', fields, message }),
  warn: (fields: Record<string, unknown>, message: string) => lines.push({ level: 'warn', fields, message }),
};
const options = (store: Store, env: Record<string, string> = {}): FleetBootCheckOptions => ({ store, env, processName: 'api', now: () => new Date(), log });

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-fleet-boot-'));
  nodeA = await openEmbeddedStore({ path: join(dir, 'platform.db') });
  nodeB = await openEmbeddedStore({ path: join(dir, 'platform.db') });
  lines = [];
});

afterEach(async () => {
  await nodeA.close();
  await nodeB.close();
  await rm(dir, { recursive: true, force: true });
});

async function licenceFiles(name: string, iat: number) {
  const keys = await generateLicenceKeyPair();
  const claims = { ...createDevLicenceClaims(new Date(iat * 1000)), iat };
  const file = join(dir, `${name}.jwt`);
  const public_key_file = join(dir, `${name}.pem`);
  await writeFile(file, `${await issueLicence(keys.privateKeyPem, claims)}\n`);
  await writeFile(public_key_file, keys.publicKeyPem);
  const config = { ...defaultConfig(), licence: { file, public_key_file } };
  return { config, state: await loadLicence(config, log) };
}

describe('agreeWithFleetAtBoot', () => {
  it('throws a ConfigError whose problems name each item that differs, never the key', async () => {
    const key = randomBytes(32);
    await agreeWithFleetAtBoot([vaultKeyClaim(key, 'AP_VAULT_KEY'), signingKeyClaim('backup_signing_key', 'sha256:aaaa')], options(nodeA));
    expect(lines.map((l) => l.message)).toEqual([
      'fleet agreement: vault_key recorded by this node (the first to boot)',
      'fleet agreement: backup_signing_key recorded by this node (the first to boot)',
    ]);
    const other = randomBytes(32);
    const error = await agreeWithFleetAtBoot([vaultKeyClaim(other, 'MY_KEY'), signingKeyClaim('backup_signing_key', 'sha256:bbbb')], options(nodeB)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    const { problems, message } = error as ConfigError;
    expect(problems).toHaveLength(2);
    expect(problems[0]).toContain('fix: set the environment variable MY_KEY ([vault] key_env)');
    expect(problems[1]).toContain("backup signing key: this node's backup signing key (sha256:bbbb) differs from the fleet's (sha256:aaaa, recorded by api@");
    expect(problems[1]).toContain('fix: set [backup] signing_key_file');
    expect(message.split('\n')[0]).toBe('this node refuses to start: it does not hold what every node of the fleet must share (docs/scale-out.md)');
    expect(message).not.toContain(other.toString('base64'));
  });

  it('AP_FLEET_ADOPT replaces the record (a warning); an unknown item stops the start', async () => {
    await agreeWithFleetAtBoot([signingKeyClaim('audit_checkpoint_key', 'sha256:old')], options(nodeA));
    await agreeWithFleetAtBoot([signingKeyClaim('audit_checkpoint_key', 'sha256:new')], options(nodeB, { AP_FLEET_ADOPT: 'audit_checkpoint_key' }));
    expect(lines.at(-1)).toMatchObject({ level: 'warn', fields: { item: 'audit_checkpoint_key', fingerprint: 'sha256:new', replaced: 'sha256:old' } });
    await expect(agreeWithFleetAtBoot([], options(nodeB, { AP_FLEET_ADOPT: 'checkpoint' }))).rejects.toThrow(
      new ConfigError(["AP_FLEET_ADOPT: unknown item 'checkpoint'; known: vault_key, audit_checkpoint_key, backup_signing_key, registry_signing_key, licence"]),
    );
  });

  it('fingerprints the licence file by its token and iat; a renewal replaces the record, the older one is then refused', async () => {
    const old = await licenceFiles('old', 1_767_225_600);
    const renewed = await licenceFiles('renewed', 1_769_904_000);
    const oldClaim = await licenceClaim(old.config, old.state);
    expect(oldClaim).toMatchObject({ item: 'licence', issuedAt: 1_767_225_600, fingerprint: expect.stringMatching(/^sha256:[0-9a-f]{32}$/) });
    await agreeWithFleetAtBoot([oldClaim], options(nodeA));
    await agreeWithFleetAtBoot([await licenceClaim(renewed.config, renewed.state)], options(nodeB));
    expect(lines.at(-1)?.message).toBe("fleet agreement: a newer licence replaces the fleet's (renewal)");
    await expect(agreeWithFleetAtBoot([oldClaim], options(nodeA))).rejects.toThrow(/licence: this node's licence \(sha256:[0-9a-f]{32}, issued 2026-01-01T00:00:00.000Z\) is older than the fleet's/);
  });

  it('a node without a licence starts, warning that the fleet has one', async () => {
    const held = await licenceFiles('held', 1_767_225_600);
    await agreeWithFleetAtBoot([await licenceClaim(held.config, held.state)], options(nodeA));
    const none = { ...defaultConfig() };
    const state = await loadLicence(none, log);
    expect(await licenceClaim(none, state)).toBeNull();
    await agreeWithFleetAtBoot([vaultKeyClaim(randomBytes(32), 'AP_VAULT_KEY'), await licenceClaim(none, state)], options(nodeB));
    expect(lines.at(-1)).toMatchObject({ level: 'warn', message: "this node has no licence but the fleet has one: set [licence] file and public_key_file to the fleet's licence" });
    expect((await fleetRecord(nodeB, 'licence'))?.issued_at).toBe(1_767_225_600);
  });
});
