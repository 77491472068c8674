import { describe, expect, it } from 'vitest';
import { ISO_REGION_CODES } from '@agent-platform/packages';
import { regionList } from './region-list.ts';

describe('regionList', () => {
  it('lists all 249 ISO 3166-1 alpha-2 codes, sorted, each with its English name', () => {
    const { regions } = regionList();
    expect(regions).toHaveLength(249);
    expect(new Set(regions.map((r) => r.code))).toEqual(new Set(ISO_REGION_CODES));
    const codes = regions.map((r) => r.code);
    expect(codes).toEqual([...codes].sort());
    expect(regions.find((r) => r.code === 'GB')?.name).toBe('United Kingdom');
    expect(regions.find((r) => r.code === 'DE')?.name).toBe('Germany');
    expect(regions.find((r) => r.code === 'CI')?.name).toBe('Côte d’Ivoire');
    // Every code has a real name, not the code echoed back.
    for (const region of regions) expect(region.name).not.toBe(region.code);
  });
});
