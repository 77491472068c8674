import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from './config-error.ts';
import { changedKeys, createConfigHolder, type ConfigChange } from './config-holder.ts';
import { readConfigFile, type LoadedConfig } from './load-config.ts';
import { defaultConfig } from './validate-config.ts';
import { REDACTED } from './redact.ts';

let dir: string;
let file: string;
const options = () => ({ env: {}, cwd: dir });

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-holder-'));
  file = join(dir, 'agent-platform.toml');
  await writeFile(file, '[server]\nbody_limit_bytes = 1000\n[runtime]\nredis_url = "redis://u:pw-1@h:6379"\n');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('config holder', () => {
  it('serves the loaded config and its redacted text', async () => {
    const holder = createConfigHolder(await readConfigFile(file, 'flag'), options());
    expect(holder.current().server.body_limit_bytes).toBe(1000);
    expect(holder.redactedText()).toContain(`redis://u:${REDACTED}@h:6379`);
    expect(holder.redactedText()).not.toContain('pw-1');
  });

  it('swaps in a valid edited file and reports the keys that need a restart', async () => {
    const holder = createConfigHolder(await readConfigFile(file, 'flag'), options());
    await writeFile(
      file,
      [
        '[server]',
        'listen = "127.0.0.1:4300"',
        'body_limit_bytes = 2000',
        '[server.tls]',
        'cert_file = "c.pem"',
        'key_file = "k.pem"',
        '[runtime]',
        'bus = "nats"',
        'redis_url = "redis://u:pw-1@h:6379"',
        '[logging]',
        'level = "debug"',
        '[surfaces]',
        'mcp = true',
      ].join('\n'),
    );
    const result = await holder.reload();
    expect(result.restart_required).toEqual(['runtime.bus', 'server.listen', 'server.tls.cert_file', 'server.tls.key_file', 'surfaces.mcp']);
    expect(holder.current().server.body_limit_bytes).toBe(2000);
    expect(holder.current().logging.level).toBe('debug');
    expect(holder.redactedText()).toContain('level = "debug"');
  });

  it('keeps the current config when the edited file is invalid', async () => {
    const holder = createConfigHolder(await readConfigFile(file, 'flag'), options());
    const before = holder.redactedText();
    await writeFile(file, '[server]\nbody_limit_bytes = 0\n[auth]\nmdoe = "local"\n');
    const error = await holder.reload().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual(['server.body_limit_bytes: must be >= 1', 'auth.mdoe: unknown key (did you mean "mode"?)']);
    expect(holder.current().server.body_limit_bytes).toBe(1000);
    expect(holder.redactedText()).toBe(before);
    await writeFile(file, '[server\n');
    await expect(holder.reload()).rejects.toThrow(/Invalid TOML/);
    expect(holder.current().server.body_limit_bytes).toBe(1000);
  });

  it('tells listeners about every successful reload, until they unsubscribe', async () => {
    const holder = createConfigHolder(await readConfigFile(file, 'flag'), options());
    const seen: ConfigChange[] = [];
    const unsubscribe = holder.onChange((change) => {
      seen.push(change);
    });
    await holder.reload();
    await writeFile(file, '[server]\nbody_limit_bytes = 3000\n');
    await holder.reload();
    expect(seen.map((c) => c.changed)).toEqual([[], ['runtime.redis_url', 'server.body_limit_bytes']]);
    expect(seen[1]?.previous.server.body_limit_bytes).toBe(1000);
    expect(seen[1]?.config.server.body_limit_bytes).toBe(3000);
    unsubscribe();
    await holder.reload();
    expect(seen).toHaveLength(2);
  });

  it('does not tell listeners about a refused reload', async () => {
    const holder = createConfigHolder(await readConfigFile(file, 'flag'), options());
    let calls = 0;
    holder.onChange(() => {
      calls++;
    });
    await writeFile(file, 'nonsense = 1\n');
    await expect(holder.reload()).rejects.toThrow(ConfigError);
    expect(calls).toBe(0);
  });

  it('refuses a reload a guard vetoes: nothing changes and no listener hears of it', async () => {
    const holder = createConfigHolder(await readConfigFile(file, 'flag'), options());
    const heard: ConfigChange[] = [];
    holder.onChange((change) => void heard.push(change));
    const remove = holder.addGuard((candidate) => (candidate.server.body_limit_bytes > 1500 ? ['server.body_limit_bytes: too large for this listener'] : []));
    await writeFile(file, '[server]\nbody_limit_bytes = 2000\n');
    const refused = await holder.reload().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as ConfigError).problems).toEqual(['server.body_limit_bytes: too large for this listener']);
    expect(holder.current().server.body_limit_bytes).toBe(1000);
    expect(holder.redactedText()).toContain('body_limit_bytes = 1000');
    expect(heard).toEqual([]);
    remove();
    await holder.reload();
    expect(holder.current().server.body_limit_bytes).toBe(2000);
  });

  it('runs concurrent reloads one after the other', async () => {
    const holder = createConfigHolder(await readConfigFile(file, 'flag'), options());
    const order: string[] = [];
    holder.onChange(async (change) => {
      order.push(`start ${change.config.server.body_limit_bytes}`);
      await new Promise<void>((resolve) => setImmediate(resolve));
      order.push('end');
    });
    await Promise.all([holder.reload(), holder.reload()]);
    expect(order).toEqual(['start 1000', 'end', 'start 1000', 'end']);
  });

  it('refuses to reload when started without a file', async () => {
    const loaded: LoadedConfig = { config: defaultConfig(), path: null, rawText: null, source: 'first-run' };
    const holder = createConfigHolder(loaded, options());
    expect(holder.redactedText()).toBeNull();
    await expect(holder.reload()).rejects.toThrow(/started without a config file/);
  });
});

describe('changedKeys', () => {
  it('compares leaves, whole arrays, and keys present on one side only', () => {
    const a = defaultConfig();
    const b = defaultConfig();
    b.server.allowed_ips = ['10.0.0.1'];
    b.server.cors = { allowed_origins: [], allow_credentials: false, max_age_secs: 600 };
    b.providers = [{ id: 'local' }];
    expect(changedKeys(a, b)).toEqual([
      'providers',
      'server.allowed_ips',
      'server.cors.allow_credentials',
      'server.cors.allowed_origins',
      'server.cors.max_age_secs',
    ]);
  });
});
