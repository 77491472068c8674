import { describe, expect, it } from 'vitest';
import { ISO_REGION_CODES, normalizeRegion } from './regions.ts';

describe('ISO 3166-1 alpha-2 regions', () => {
  it('holds the 249 assigned codes, each one a region name known to ICU', () => {
    expect(ISO_REGION_CODES.size).toBe(249);
    const names = new Intl.DisplayNames(['en'], { type: 'region' });
    for (const code of ISO_REGION_CODES) {
      expect(code).toMatch(/^[A-Z]{2}$/);
      expect(names.of(code)).not.toBe(code);
    }
  });

  it('normalizes case-insensitive input to upper case and refuses anything else', () => {
    expect(normalizeRegion('us')).toBe('US');
    expect(normalizeRegion('gB')).toBe('GB');
    expect(normalizeRegion('UK')).toBeUndefined();
    expect(normalizeRegion('EU')).toBeUndefined();
    expect(normalizeRegion(' US')).toBeUndefined();
    expect(normalizeRegion('USA')).toBeUndefined();
  });
});
