import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseConfigText } from '@agent-platform/config';
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
  it('configure a fleet the config loader accepts: NATS and BullMQ, embedded store on one host, MongoDB on several', () => {
    const compose = parseConfigText(readFileSync(join(DEPLOY, 'fleet.toml'), 'utf8'), join(DEPLOY, 'fleet.toml'));
    expect(compose.runtime).toMatchObject({ bus: 'nats', queue: 'bullmq', store: 'embedded' });
    const k8s = parseConfigText(configMapToml(readFileSync(join(DEPLOY, 'kubernetes', 'configmap.yaml'), 'utf8')), '/etc/agent-platform/agent-platform.toml');
    expect(k8s.runtime).toMatchObject({ bus: 'nats', queue: 'bullmq', store: 'mongodb' });
    expect(k8s.auth.mode).toBe('local');
  });

  it('start apps whose entry points exist', () => {
    const files = ['docker-compose.yml', ...readdirSync(join(DEPLOY, 'kubernetes')).map((f) => join('kubernetes', f))];
    const mains = files.flatMap((f) => [...readFileSync(join(DEPLOY, f), 'utf8').matchAll(/apps\/[a-z-]+\/src\/main\.ts/g)].map((m) => m[0]));
    expect(new Set(mains)).toEqual(new Set(['apps/api/src/main.ts', 'apps/agent-worker/src/main.ts', 'apps/scheduler/src/main.ts', 'apps/channel-bridge/src/main.ts']));
    for (const main of mains) expect(existsSync(join(ROOT, main))).toBe(true);
  });
});
