import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeVaultKey, parseConfigText } from '@agent-platform/config';
import { loadCheckpointSigner } from '../../apps/api/src/audit/load-checkpoint-signer.ts';
import { describe, expect, it } from 'vitest';

// deploy/ holds examples that cannot be run here (no Docker engine or cluster). What can be
// checked is that they do not rot: their config files pass the platform's own validation and
// every app entry point they name exists.
const DEPLOY = fileURLToPath(new URL('../../deploy/', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The TOML embedded in the ConfigMap (`agent-platform.toml: |`, indented by 4). */
function configMapToml(text: string): string {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.includes('agent-platform.toml: |'));
  return lines
    .slice(start + 1)
    .filter((l) => l.startsWith('    ') || l.trim() === '')
    .map((l) => l.slice(4))
    .join('\n');
}

describe('deploy examples', () => {
  it('configure a fleet the config loader accepts: NATS, BullMQ and PostgreSQL, the keys from secrets; MongoDB kept as a variant', () => {
    const compose = parseConfigText(readFileSync(join(DEPLOY, 'fleet.toml'), 'utf8'), join(DEPLOY, 'fleet.toml'));
    expect(compose.runtime).toMatchObject({ bus: 'nats', queue: 'bullmq', store: 'postgres', postgres_password_env: 'AP_POSTGRES_PASSWORD' });
    expect(compose.audit.checkpoints.signing_key_file).toBe('/run/secrets/audit-checkpoint-key.pem');
    expect(compose.backup.signing_key_file).toBe('/run/secrets/backup-signing-key.pem');
    const k8s = parseConfigText(configMapToml(readFileSync(join(DEPLOY, 'kubernetes', 'configmap.yaml'), 'utf8')), '/etc/agent-platform/agent-platform.toml');
    expect(k8s.runtime).toMatchObject({ bus: 'nats', queue: 'bullmq', store: 'postgres', postgres_password_env: 'AP_POSTGRES_PASSWORD' });
    expect(k8s.auth.mode).toBe('local');
    const mongo = parseConfigText(configMapToml(readFileSync(join(DEPLOY, 'kubernetes', 'mongodb', 'configmap.yaml'), 'utf8')), '/etc/agent-platform/agent-platform.toml');
    expect(mongo.runtime).toMatchObject({ store: 'mongodb' });
    // Every file the pods' config names is mounted from the Secret, which has a key for it.
    const secret = readFileSync(join(DEPLOY, 'kubernetes', 'secret.yaml'), 'utf8');
    const api = readFileSync(join(DEPLOY, 'kubernetes', 'api.yaml'), 'utf8');
    for (const file of [k8s.licence.file, k8s.licence.public_key_file, k8s.audit.checkpoints.signing_key_file, k8s.backup.signing_key_file]) {
      const name = basename(file ?? '');
      expect(file).toBe(`/etc/agent-platform/secrets/${name}`);
      expect(api).toContain(`{ key: ${name}, path: ${name} }`);
      expect(secret).toContain(`  ${name}:`);
    }
    const composeFile = readFileSync(join(DEPLOY, 'docker-compose.yml'), 'utf8');
    for (const file of [compose.licence.file, compose.licence.public_key_file, compose.audit.checkpoints.signing_key_file, compose.backup.signing_key_file]) {
      const name = basename(file ?? '');
      expect(file).toBe(`/run/secrets/${name}`);
      expect(composeFile).toContain(`    - ${name}\n`);
      expect(composeFile).toContain(`    file: secrets/${name}\n`);
    }
    expect(secret).toContain('  AP_POSTGRES_PASSWORD:');
    expect(secret).toContain('  AP_VAULT_KEY:');
  });

  it('make the shared secrets with deploy/secrets/make-secrets.sh in a form the platform loads, never overwriting them', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ap-deploy-secrets-'));
    try {
      execFileSync(join(DEPLOY, 'secrets', 'make-secrets.sh'), [dir]);
      const env = Object.fromEntries(readFileSync(join(dir, 'platform.env'), 'utf8').trim().split('\n').map((l) => l.split(/=(.*)/s).slice(0, 2) as [string, string]));
      expect(decodeVaultKey(env.AP_VAULT_KEY!)).not.toBeNull();
      expect(readFileSync(join(dir, 'postgres.env'), 'utf8')).toBe(`POSTGRES_PASSWORD=${env.AP_POSTGRES_PASSWORD}\n`);
      const checkpoint = await loadCheckpointSigner(join(dir, 'audit-checkpoint-key.pem'));
      const backup = await loadCheckpointSigner(join(dir, 'backup-signing-key.pem'));
      expect(checkpoint.keyId).not.toBe(backup.keyId);
      const before = readFileSync(join(dir, 'platform.env'), 'utf8');
      execFileSync(join(DEPLOY, 'secrets', 'make-secrets.sh'), [dir]);
      expect(readFileSync(join(dir, 'platform.env'), 'utf8')).toBe(before);
      expect((await loadCheckpointSigner(join(dir, 'audit-checkpoint-key.pem'))).keyId).toBe(checkpoint.keyId);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('start apps whose entry points exist', () => {
    const files = ['docker-compose.yml', ...readdirSync(join(DEPLOY, 'kubernetes')).filter((f) => f.endsWith('.yaml')).map((f) => join('kubernetes', f))];
    const mains = files.flatMap((f) => [...readFileSync(join(DEPLOY, f), 'utf8').matchAll(/apps\/[a-z-]+\/src\/main\.ts/g)].map((m) => m[0]));
    expect(new Set(mains)).toEqual(new Set(['apps/api/src/main.ts', 'apps/agent-worker/src/main.ts', 'apps/scheduler/src/main.ts', 'apps/channel-bridge/src/main.ts']));
    for (const main of mains) expect(existsSync(join(ROOT, main))).toBe(true);
  });
});
