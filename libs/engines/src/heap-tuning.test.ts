import { PLATFORM_LOADER } from '@agent-platform/testkit';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { HeapTuningError, tuneHeap } from './heap-tuning.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

describe('AP_HEAP_GROWING_PERCENT', () => {
  it('takes a whole number from 0 to 1000, and nothing else', () => {
    for (const value of [undefined, '', '0', '50', '1000']) expect(() => tuneHeap({ AP_HEAP_GROWING_PERCENT: value })).not.toThrow();
    for (const value of ['abc', '-1', '2.5', '1001']) {
      expect(() => tuneHeap({ AP_HEAP_GROWING_PERCENT: value })).toThrow(HeapTuningError);
      expect(() => tuneHeap({ AP_HEAP_GROWING_PERCENT: value })).toThrow(`got '${value}'`);
    }
  });

  it('a process given a bad value refuses to start, saying what to set, without a stack', () => {
    const run = spawnSync(process.execPath, ['--import', PLATFORM_LOADER, 'apps/scheduler/src/main.ts'], {
      cwd: ROOT,
      env: { ...process.env, AP_HEAP_GROWING_PERCENT: 'lots' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr.trim()).toBe("AP_HEAP_GROWING_PERCENT must be a whole number from 0 to 1000 (0 keeps V8's default), got 'lots'");
  }, 70_000);
});
