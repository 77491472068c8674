import { describe, expect, it } from 'vitest';
import { createAbortRegistry } from './abort-registry.ts';

describe('abort registry', () => {
  it('aborts an agent\'s invocations, and one invocation by id', () => {
    const registry = createAbortRegistry({ rememberMs: () => 60_000 });
    const a = new AbortController();
    const b = new AbortController();
    registry.track('agent-1', a, 'inv-a');
    registry.track('agent-1', b, 'inv-b');
    expect(registry.cancel('inv-b', 'gone')).toBe(true);
    expect([a.signal.aborted, b.signal.aborted]).toEqual([false, true]);
    expect(b.signal.reason).toBe('gone');
    expect(registry.abortAgent('agent-1', 'suspended')).toBe(2);
    expect(a.signal.reason).toBe('suspended');
  });

  it('remembers a cancel that arrived before its invocation, for a while', () => {
    let now = 0;
    const registry = createAbortRegistry({ rememberMs: () => 1_000, now: () => now });
    expect(registry.cancel('early', 'gone')).toBe(false);
    const early = new AbortController();
    registry.track('agent-1', early, 'early');
    expect(early.signal.aborted).toBe(true);

    registry.cancel('late', 'gone');
    now = 1_001;
    const late = new AbortController();
    registry.track('agent-1', late, 'late');
    expect(late.signal.aborted).toBe(false);
  });

  it('forgets a finished invocation: a cancel after it is only remembered', () => {
    const registry = createAbortRegistry({ rememberMs: () => 1_000 });
    const controller = new AbortController();
    const untrack = registry.track('agent-1', controller, 'inv');
    untrack();
    expect(registry.cancel('inv', 'gone')).toBe(false);
    expect(controller.signal.aborted).toBe(false);
  });
});
