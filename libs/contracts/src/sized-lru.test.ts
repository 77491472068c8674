import { describe, expect, it } from 'vitest';
import { SizedLru } from './sized-lru.ts';

describe('SizedLru', () => {
  const span = { category: 'email' as const, start: 0, end: 1 };
  it('keeps the newest entries up to its size, an entry used again counting as new', () => {
    const cache = new SizedLru<string, unknown[]>(10);
    cache.set('aaaa', [span], 4);
    cache.set('bbbb', [], 4);
    expect(cache.get('aaaa')).toEqual([span]);
    cache.set('cccc', [], 4);
    expect(cache.get('bbbb')).toBeUndefined();
    expect(cache.get('aaaa')).toEqual([span]);
    expect(cache.get('cccc')).toEqual([]);
    cache.set('a text longer than ten', [span], 22);
    expect(cache.get('a text longer than ten')).toBeUndefined();
  });

  it('gives back the size of what it deletes: room for new entries', () => {
    const cache = new SizedLru<string, string>(8);
    cache.set('a', 'aaaa', 4);
    cache.set('b', 'bbbb', 4);
    cache.delete('a');
    cache.delete('missing');
    cache.set('c', 'cccc', 4);
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([undefined, 'bbbb', 'cccc']);
  });
});
