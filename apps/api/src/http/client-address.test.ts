import { describe, expect, it } from 'vitest';
import { buildTrustedProxies, resolveClientAddress, UNIX_SOCKET_CLIENT } from './client-address.ts';

describe('resolveClientAddress', () => {
  const proxies = buildTrustedProxies(['10.0.0.0/8', '2001:db8::1', 'unix']);

  it('is the peer when no proxy is trusted, whatever X-Forwarded-For says', () => {
    expect(resolveClientAddress('203.0.113.1', '198.51.100.1', buildTrustedProxies([]))).toBe('203.0.113.1');
    expect(resolveClientAddress('::ffff:203.0.113.1', undefined, proxies)).toBe('203.0.113.1');
    expect(resolveClientAddress('203.0.113.1', '198.51.100.1', proxies)).toBe('203.0.113.1');
    expect(resolveClientAddress(undefined, '198.51.100.1', buildTrustedProxies(['10.0.0.1']))).toBe(UNIX_SOCKET_CLIENT);
  });

  it('behind trusted proxies, is the right-most forwarded address that is not a trusted proxy', () => {
    expect(resolveClientAddress('10.0.0.5', '198.51.100.7', proxies)).toBe('198.51.100.7');
    expect(resolveClientAddress('10.0.0.5', '1.2.3.4, 198.51.100.7, 10.1.1.1', proxies)).toBe('198.51.100.7');
    expect(resolveClientAddress('10.0.0.5', ['1.2.3.4', '198.51.100.7'], proxies)).toBe('198.51.100.7');
    expect(resolveClientAddress('2001:db8::1', '[2001:db8::9]:4711', proxies)).toBe('2001:db8::9');
    expect(resolveClientAddress('10.0.0.5', '198.51.100.7:4711', proxies)).toBe('198.51.100.7');
    expect(resolveClientAddress(undefined, '198.51.100.8', proxies)).toBe('198.51.100.8');
  });

  it('stops at a malformed entry, keeping the hop that reported it', () => {
    expect(resolveClientAddress('10.0.0.5', '198.51.100.7, not-an-ip', proxies)).toBe('10.0.0.5');
    expect(resolveClientAddress('10.0.0.5', 'junk, 10.2.2.2', proxies)).toBe('10.2.2.2');
    expect(resolveClientAddress('10.0.0.5', '', proxies)).toBe('10.0.0.5');
  });
});
