import { describe, expect, it } from 'vitest';
import { timeOrderedUuid } from './time-ordered-id.ts';

describe('timeOrderedUuid', () => {
  it('is a version 7 UUID whose first 48 bits are the time, so ids sort by time', () => {
    const at = Date.parse('2026-11-30T10:00:00.000Z');
    const id = timeOrderedUuid(at);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(at);
    const later = Array.from({ length: 300 }, (_, i) => timeOrderedUuid(at + 1 + i));
    expect([...later].sort()).toEqual(later);
    expect(later.every((other) => other > id)).toBe(true);
  });

  it('never repeats within one millisecond', () => {
    const at = Date.now();
    const ids = new Set(Array.from({ length: 5_000 }, () => timeOrderedUuid(at)));
    expect(ids.size).toBe(5_000);
  });
});
