import { describe, expect, it } from 'vitest';
import { variantDetails } from './variant-stats.ts';

const sample = (latenciesMs: number[], cpuMs: number) => ({ latenciesMs, cpuMs });

describe('variantDetails', () => {
  it('summarizes each variant and reports each comparison as a p50 and a CPU difference', () => {
    const details = variantDetails(
      new Map([
        ['read', sample([4, 5, 6, 5.5], 2)],
        ['write', sample([6, 7.25, 8, 9], 3)],
      ]),
      [{ name: 'journal', more: 'write', less: 'read' }],
    );
    expect(details).toEqual({
      read_n: 4,
      read_p50_ms: 5,
      read_p99_ms: 6,
      read_mean_ms: 5.125,
      read_cpu_us: 500,
      write_n: 4,
      write_p50_ms: 7.25,
      write_p99_ms: 9,
      write_mean_ms: 7.563,
      write_cpu_us: 750,
      journal_p50_ms: 2.25,
      journal_cpu_us: 250,
    });
  });

  it('leaves out a comparison with a variant that answered nothing', () => {
    const details = variantDetails(
      new Map([
        ['read', sample([], 0)],
        ['write', sample([1], 1)],
      ]),
      [
        { name: 'journal', more: 'write', less: 'read' },
        { name: 'other', more: 'write', less: 'absent' },
      ],
    );
    expect(details).toMatchObject({ read_n: 0, read_cpu_us: 0, write_n: 1, write_cpu_us: 1000 });
    expect(details).not.toHaveProperty('journal_p50_ms');
    expect(details).not.toHaveProperty('other_p50_ms');
  });
});
