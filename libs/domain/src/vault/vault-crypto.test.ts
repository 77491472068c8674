import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PlatformError } from '../errors/platform-error.ts';
import { openValue, sealValue } from './vault-crypto.ts';

const key = randomBytes(32);

describe('vault crypto', () => {
  it('round-trips and uses a fresh IV for every seal', () => {
    const a = sealValue(key, 'db-password', 'hunter2');
    const b = sealValue(key, 'db-password', 'hunter2');
    expect(a).toMatch(/^v1:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/);
    expect(a).not.toBe(b);
    expect(openValue(key, 'db-password', a)).toBe('hunter2');
    expect(openValue(key, 'db-password', b)).toBe('hunter2');
  });

  it('binds the key name: a ciphertext moved to another name does not open', () => {
    const sealed = sealValue(key, 'openai', 'sk-live');
    expect(() => openValue(key, 'crm', sealed)).toThrow(/cannot be decrypted/);
  });

  it('refuses a wrong vault key or altered bytes with an error that carries no value', () => {
    const sealed = sealValue(key, 'k', 'plain-secret');
    const wrong = (): string => openValue(randomBytes(32), 'k', sealed);
    expect(wrong).toThrow(PlatformError);
    expect(wrong).toThrow(/wrong vault key/);
    try {
      wrong();
    } catch (e) {
      expect(String((e as Error).message)).not.toContain('plain-secret');
      expect(String((e as Error).message)).not.toContain(sealed);
    }
    const [v, iv, tag, ct] = sealed.split(':') as [string, string, string, string];
    const flipped = Buffer.from(ct, 'base64');
    flipped[0] = (flipped[0] ?? 0) ^ 1;
    expect(() => openValue(key, 'k', [v, iv, tag, flipped.toString('base64')].join(':'))).toThrow(/altered/);
    expect(() => openValue(key, 'k', [v, iv, tag.slice(0, 8), ct].join(':'))).toThrow(/cannot be decrypted/);
    expect(() => openValue(key, 'k', `v2:${iv}:${tag}:${ct}`)).toThrow(/unknown format/);
  });

  it('requires a 32-byte key', () => {
    expect(() => sealValue(randomBytes(16), 'k', 'v')).toThrow(/32 bytes/);
  });
});
