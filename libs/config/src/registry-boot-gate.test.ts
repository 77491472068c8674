import { describe, expect, it } from 'vitest';
import { checkRegistryBootGate } from './registry-boot-gate.ts';
import { defaultConfig } from './validate-config.ts';

function config(listen: string, mode: 'disabled' | 'local' | 'oidc', insecure = false) {
  const c = defaultConfig();
  c.registry.listen = listen;
  c.registry.auth.mode = mode;
  c.registry.auth.allow_insecure_no_auth = insecure;
  // The api's own settings do not matter to the registry's gate.
  c.auth.mode = 'local';
  return c;
}

describe('registry boot gate', () => {
  it('is open by default (mode disabled on 127.0.0.1:4210)', () => {
    expect(checkRegistryBootGate(defaultConfig())).toEqual({ ok: true });
  });

  it.each(['127.0.0.1:4210', '[::1]:4210', 'localhost:4210', 'unix:/tmp/registry.sock'])('starts with auth disabled on the local bind %s', (listen) => {
    expect(checkRegistryBootGate(config(listen, 'disabled'))).toEqual({ ok: true });
  });

  it.each(['0.0.0.0:4210', '[::]:4210', '192.0.2.10:4210', 'registry.example.com:443'])('refuses auth disabled on %s, naming the way out', (listen) => {
    const result = checkRegistryBootGate(config(listen, 'disabled'));
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.reason).toContain(listen);
      expect(result.reason).toContain('[registry.auth] allow_insecure_no_auth');
      expect(result.reason).toContain('refusing to start the registry');
    }
  });

  it('lets the operator override it, with a warning', () => {
    const result = checkRegistryBootGate(config('0.0.0.0:4210', 'disabled', true));
    expect(result.ok).toBe(true);
    expect(result.ok && result.warning).toMatch(/anonymous registry admin/);
  });

  it('lets local and oidc modes listen anywhere', () => {
    expect(checkRegistryBootGate(config('0.0.0.0:4210', 'local'))).toEqual({ ok: true });
    expect(checkRegistryBootGate(config('0.0.0.0:4210', 'oidc'))).toEqual({ ok: true });
  });

  it('is not fooled by the api settings: api auth disabled on loopback, registry exposed', () => {
    const c = config('0.0.0.0:4210', 'disabled');
    c.auth.mode = 'disabled';
    c.auth.allow_insecure_no_auth = true;
    expect(checkRegistryBootGate(c).ok).toBe(false);
  });
});
