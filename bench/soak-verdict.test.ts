import { describe, expect, it } from 'vitest';
import { soakVerdict, type SoakSample } from './soak-verdict.ts';

const sample = (atSecs: number, rssMb: number | null, p99Ms: number): SoakSample => ({ atSecs, throughputRps: 500, p50Ms: 5, p99Ms, rssMb });

describe('soak verdict', () => {
  it('calls a soak flat when the last third holds the memory and p99 of the middle one, warm-up left out', () => {
    const samples = [sample(30, 150, 40), sample(60, 300, 12), sample(90, 310, 12), sample(120, 305, 13), sample(150, 312, 14), sample(180, 318, 12)];
    expect(soakVerdict(samples).flat).toBe(true);
  });

  it('is not flat when RSS keeps growing', () => {
    const samples = [sample(30, 200, 12), sample(60, 250, 12), sample(90, 280, 12), sample(120, 320, 12), sample(150, 360, 12), sample(180, 400, 12)];
    const verdict = soakVerdict(samples);
    expect(verdict.flat).toBe(false);
    expect(verdict.rss).toBe('max 320 MB in the middle third, 400 MB in the last (limit +10 %)');
  });

  it('is not flat when p99 drifts up, nor when RSS could not be read or there are too few samples', () => {
    expect(soakVerdict([sample(30, 300, 10), sample(60, 300, 10), sample(90, 300, 10), sample(120, 300, 30)]).flat).toBe(false);
    expect(soakVerdict([sample(30, null, 10), sample(60, null, 10), sample(90, null, 10)]).flat).toBe(false);
    expect(soakVerdict([sample(30, 300, 10), sample(60, 300, 10)])).toMatchObject({ flat: false, rss: 'too few samples (at least 3)' });
  });
});
