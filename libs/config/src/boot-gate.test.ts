import { describe, expect, it } from 'vitest';
import { bootGateForReload, checkBootGate } from './boot-gate.ts';
import { defaultConfig } from './validate-config.ts';

function config(listen: string, mode: 'disabled' | 'local', options: { insecure?: boolean; api?: boolean; mcp?: boolean; dashboard?: boolean } = {}) {
  const c = defaultConfig();
  c.server.listen = listen;
  c.auth.mode = mode;
  c.auth.allow_insecure_no_auth = options.insecure ?? false;
  c.surfaces.api = options.api ?? true;
  c.surfaces.mcp = options.mcp ?? false;
  c.surfaces.dashboard = options.dashboard ?? false;
  return c;
}

describe('boot gate (spec §Authentication rule 4)', () => {
  it.each(['127.0.0.1:4200', '127.8.9.10:1', '[::1]:4200', 'localhost:4200', 'LOCALHOST:80', 'unix:/tmp/ap.sock'])(
    'starts with auth disabled on the local bind %s',
    (listen) => {
      expect(checkBootGate(config(listen, 'disabled'))).toEqual({ ok: true });
    },
  );

  it.each(['0.0.0.0:4200', '[::]:4200', '10.1.2.3:4200', 'api.example.com:443', '128.0.0.1:1'])(
    'refuses auth disabled on the non-loopback bind %s and says how to fix it',
    (listen) => {
      const result = checkBootGate(config(listen, 'disabled'));
      expect(result.ok).toBe(false);
      if (!result.ok) {
        expect(result.reason).toContain(listen);
        expect(result.reason).toContain('allow_insecure_no_auth');
      }
    },
  );

  it('accepts the non-loopback bind with allow_insecure_no_auth, with a warning', () => {
    const result = checkBootGate(config('0.0.0.0:4200', 'disabled', { insecure: true }));
    expect(result.ok).toBe(true);
    expect(result.ok && result.warning).toMatch(/anonymous admin/);
  });

  it('lets local auth listen anywhere, without warning', () => {
    expect(checkBootGate(config('0.0.0.0:4200', 'local'))).toEqual({ ok: true });
  });

  it('applies to the mcp surface too, and not when neither api nor mcp is served', () => {
    expect(checkBootGate(config('0.0.0.0:4200', 'disabled', { api: false, mcp: true })).ok).toBe(false);
    expect(checkBootGate(config('0.0.0.0:4200', 'disabled', { api: false, mcp: false })).ok).toBe(true);
  });

  it('applies to the dashboard surface (served on the api listener) even with api and mcp off', () => {
    const refused = checkBootGate(config('0.0.0.0:4200', 'disabled', { api: false, mcp: false, dashboard: true }));
    expect(refused.ok).toBe(false);
    expect(checkBootGate(config('0.0.0.0:4200', 'disabled', { dashboard: true, insecure: true })).ok).toBe(true);
    expect(checkBootGate(config('127.0.0.1:4200', 'disabled', { dashboard: true }))).toEqual({ ok: true });
    expect(checkBootGate(config('0.0.0.0:4200', 'local', { dashboard: true }))).toEqual({ ok: true });
  });

  it('judges a reload by the running listener and surfaces, and the candidate auth settings', () => {
    const running = config('0.0.0.0:4200', 'local');
    const [reason] = bootGateForReload(running, config('127.0.0.1:4200', 'disabled'));
    expect(reason).toContain('refusing this reload');
    expect(reason).toContain('0.0.0.0:4200');
    expect(bootGateForReload(running, config('127.0.0.1:4200', 'disabled', { insecure: true }))).toEqual([]);
    expect(bootGateForReload(config('127.0.0.1:4200', 'local'), config('0.0.0.0:4200', 'disabled'))).toEqual([]);
    expect(bootGateForReload(config('0.0.0.0:4200', 'local', { api: false }), config('0.0.0.0:4200', 'disabled', { api: true }))).toEqual([]);
  });
});
