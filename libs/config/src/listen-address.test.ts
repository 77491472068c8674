import { describe, expect, it } from 'vitest';
import { isIpOrCidr, parseListenAddress, readListenAddress } from './listen-address.ts';

describe('listen addresses', () => {
  it('parses host:port, bracketed IPv6 and unix sockets', () => {
    expect(parseListenAddress('127.0.0.1:4200')).toEqual({ kind: 'tcp', host: '127.0.0.1', port: 4200 });
    expect(parseListenAddress('[::1]:0')).toEqual({ kind: 'tcp', host: '::1', port: 0 });
    expect(parseListenAddress('my-host.internal:65535')).toEqual({ kind: 'tcp', host: 'my-host.internal', port: 65535 });
    expect(parseListenAddress('unix:/run/ap.sock')).toEqual({ kind: 'unix', path: '/run/ap.sock' });
  });

  it('explains what is wrong with a bad address', () => {
    expect(readListenAddress('4200')).toMatch(/host:port/);
    expect(readListenAddress('::1:4200')).toMatch(/not an IPv4 address, \[IPv6\] address or hostname/);
    expect(readListenAddress('[zz]:1')).toMatch(/not an IPv6 address/);
    expect(readListenAddress('h:-1')).toMatch(/port must be/);
    expect(() => parseListenAddress('nope')).toThrow(/invalid listen address/);
  });

  it('recognises IPs and CIDR blocks', () => {
    expect(['1.2.3.4', '10.0.0.0/8', '0.0.0.0/0', '::1', 'fd00::/8', '2001:db8::/128'].every(isIpOrCidr)).toBe(true);
    expect(['1.2.3', '10.0.0.0/33', '::/129', 'host', '1.2.3.4/', '1.2.3.4/x'].some(isIpOrCidr)).toBe(false);
  });
});
