import { describe, expect, it } from 'vitest';
import { HandleCache } from './handle-cache.ts';

// A handle per (name, options by value): the domain asks for its collections per call with fresh
// options objects, and each of those calls must find the handle the first one made.
describe('HandleCache', () => {
  const made = () => {
    let count = 0;
    return { create: () => ({ n: ++count }), count: () => count };
  };

  it('answers the same handle for options equal by value, whatever the object or member order', () => {
    const cache = new HandleCache();
    const { create, count } = made();
    const first = cache.get('agents', { indexes: [{ field: 'name', unique: true }], readMostly: true }, create);
    expect(cache.get('agents', { readMostly: true, indexes: [{ unique: true, field: 'name' }] }, create)).toBe(first);
    expect(cache.get('agents', { indexes: [{ field: 'name', unique: true }], readMostly: true, ttlField: undefined }, create)).toBe(first);
    expect(count()).toBe(1);
  });

  it('makes another handle for other options or another name', () => {
    const cache = new HandleCache();
    const { create, count } = made();
    const base = cache.get('agents', { indexes: [{ field: 'name' }] }, create);
    expect(cache.get('agents', { indexes: [{ field: 'name', unique: true }] }, create)).not.toBe(base);
    expect(cache.get('agents', { indexes: [{ field: 'name' }, { field: 'state' }] }, create)).not.toBe(base);
    expect(cache.get('agents', { indexes: [{ field: 'name' }], readMostly: true }, create)).not.toBe(base);
    expect(cache.get('skills', { indexes: [{ field: 'name' }] }, create)).not.toBe(base);
    expect(cache.get('agents', {}, create)).not.toBe(base);
    expect(count()).toBe(6);
  });

  it('keeps the options as they were asked for: a caller changing its object afterwards changes nothing', () => {
    const cache = new HandleCache();
    const { create } = made();
    const options: { indexes: Array<{ field: string }> } = { indexes: [{ field: 'name' }] };
    const first = cache.get('agents', options, create);
    options.indexes.push({ field: 'state' });
    expect(cache.get('agents', { indexes: [{ field: 'name' }] }, create)).toBe(first);
    expect(cache.get('agents', options, create)).not.toBe(first);
  });

  it('starts over after clear', () => {
    const cache = new HandleCache();
    const { create } = made();
    const first = cache.get('agents', {}, create);
    cache.clear();
    expect(cache.get('agents', {}, create)).not.toBe(first);
  });
});
