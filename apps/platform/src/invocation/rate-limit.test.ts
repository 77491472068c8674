import { fixedClock } from '@agent-platform/domain';
import { afterEach, describe, expect, it } from 'vitest';
import { insertAgent, startPlatformTestApi, type PlatformTestApi } from '../testing/platform-test-api.ts';

let api: PlatformTestApi | null = null;
afterEach(async () => {
  await api?.close();
  api = null;
});

describe('per-agent rate limit ([agents] rate_limit_per_minute)', () => {
  it('answers 429 RateLimited with Retry-After to the end of the minute, per agent', async () => {
    // 15 s into a minute, so the window ends in exactly 45 s.
    const clock = fixedClock(new Date(Math.floor(Date.now() / 60_000) * 60_000 + 15_000));
    api = await startPlatformTestApi({ clock, config: { agents: { rate_limit_per_minute: 3 } } });
    const busy = await insertAgent(api);
    const other = await insertAgent(api);
    const send = (id: string) => api!.request('POST', `/agents/${id}/send`, { body: { message: 'hi' } });
    for (let i = 0; i < 3; i++) expect((await send(busy.id)).status).toBe(200);

    const limited = await send(busy.id);
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('45');
    expect(limited.body.error).toMatchObject({ category: 'RateLimited', details: { agent_id: busy.id, limit_per_minute: 3, retry_after_secs: 45 } });
    expect((await send(other.id)).status).toBe(200);
    // A refused call is not an execution.
    expect((await api.deps.agentStats.read(busy.id)).invocation_metrics.total_count).toBe(3);

    clock.advance(45_000);
    expect((await send(busy.id)).status).toBe(200);
  });
});
