import { describe, expect, it } from 'vitest';
import { checkUrlTarget, isPrivateAddress } from './private-target.ts';

describe('D9 private targets', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '::',
    'fc00::1',
    'fd12::1',
    'fe80::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::ffff:7f00:1',
    '::ffff:a00:1',
    '::7f00:1',
  ])('%s is private', (address) => expect(isPrivateAddress(address)).toBe(true));

  it.each(['8.8.8.8', '172.32.0.1', '1.1.1.1', '2606:4700::1111', '::ffff:8.8.8.8', '::ffff:808:808'])(
    '%s is public',
    (address) => expect(isPrivateAddress(address)).toBe(false),
  );

  it('refuses private IP literals and localhost names in URLs unless allowed', () => {
    for (const url of [
      'http://127.0.0.1:8080/x',
      'http://[::1]/mcp',
      'http://localhost/x',
      'https://api.localhost/x',
      'http://169.254.169.254/latest',
    ])
      expect(() => checkUrlTarget(new URL(url), false)).toThrow(/allow_private_targets/);
    expect(() => checkUrlTarget(new URL('http://127.0.0.1/x'), true)).not.toThrow();
    expect(() => checkUrlTarget(new URL('https://claims.example.com/x'), false)).not.toThrow();
  });
});
