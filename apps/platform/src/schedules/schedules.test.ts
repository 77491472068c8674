import { waitUntil } from '@agent-platform/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { insertAgent, startPlatformTestApi, type PlatformTestApi } from '../testing/platform-test-api.ts';

// Schedules end to end in one process, as `npm start` composes it: the api's routes, the
// scheduler firing over the embedded queue, the agent worker answering with the built-in `local`
// model (an echo, DECISIONS D6). What is checked is what a user sees over HTTP.
let api: PlatformTestApi | null = null;
afterEach(async () => {
  await api?.close();
  api = null;
});

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function start(): Promise<PlatformTestApi> {
  api = await startPlatformTestApi();
  return api;
}

const fires = async (id: string) => (await api!.request('GET', `/schedules/${id}/fires`)).body;

describe('POST /cron/jobs/{id}/run', () => {
  it('fires at once and answers the InvocationResult with the Cron source; last_run and the fire log follow', async () => {
    const api = await start();
    const agent = await insertAgent(api);
    const id = (
      await api.request('POST', '/cron/jobs', {
        body: { agent_id: agent.id, expression: '0 9 * * *', tz: 'Europe/Paris', prompt: 'Morning digest' },
      })
    ).body.id;
    const res = await api.request('POST', `/cron/jobs/${id}/run`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      content: 'Morning digest',
      tokens_used: 8,
      duration_ms: expect.any(Number),
      correlation_id: expect.any(String),
      source: {
        Cron: { schedule_id: id, expression: '0 9 * * *', scheduled_at: expect.stringMatching(ISO) },
      },
    });
    const [job] = (await api.request('GET', `/agents/${agent.id}/schedules`)).body.schedules;
    expect(job.last_run).toBe(res.body.source.Cron.scheduled_at);
    expect((await fires(id)).fires).toEqual([
      expect.objectContaining({ trigger: 'manual', outcome: 'fired', attempts: 1 }),
    ]);
    const stats = (await api.request('GET', `/agents/${agent.id}`)).body;
    expect(stats.invocation_metrics.by_source.map((row: unknown[]) => row.slice(0, 2))).toEqual([
      ['Cron', 1],
    ]);
  });

  it('refuses a Suspended agent with InvalidState naming the state (D9), and records the refusal', async () => {
    const api = await start();
    const agent = await insertAgent(api, { state: 'Suspended' });
    const id = (
      await api.request('POST', `/agents/${agent.id}/schedules`, { body: { every_secs: 3600, prompt: 'p' } })
    ).body.id;
    const res = await api.request('POST', `/cron/jobs/${id}/run`);
    expect(res.status).toBe(500);
    expect(res.body.error).toMatchObject({
      category: 'InvalidState',
      message: expect.stringContaining('Suspended'),
    });
    expect((await fires(id)).fires).toEqual([
      expect.objectContaining({
        trigger: 'manual',
        outcome: 'refused',
        reason: expect.stringContaining('Suspended'),
      }),
    ]);
    expect((await api.request('GET', '/cron/jobs')).body.jobs[0].last_run).toBeNull();
  });
});

describe('schedules firing through the scheduler', () => {
  it('fires a schedule created over HTTP at its slots, updating last_run and next_run, and a paused one does not fire', async () => {
    const api = await start();
    const agent = await insertAgent(api);
    const beat = (
      await api.request('POST', `/agents/${agent.id}/schedules`, {
        body: { every_secs: 1, prompt: 'Check the FNOL queue' },
      })
    ).body.id;
    const quiet = (
      await api.request('POST', `/agents/${agent.id}/schedules`, {
        body: { every_secs: 1, prompt: 'Should stay quiet' },
      })
    ).body.id;
    expect((await api.request('POST', `/schedules/${quiet}/pause`)).body).toEqual({ status: 'paused' });
    await waitUntil(
      async () =>
        (await fires(beat)).fires.filter((f: { outcome: string }) => f.outcome === 'fired').length >= 2,
      {
        timeoutMs: 6_000,
        message: 'two fires',
      },
    );
    const [job] = (await api.request('GET', '/cron/jobs')).body.jobs;
    expect(job.id).toBe(beat);
    expect(job.last_run).toMatch(ISO);
    expect(Date.parse(job.next_run)).toBeGreaterThan(Date.parse(job.last_run));
    expect(Date.parse(job.next_run) - Date.now()).toBeLessThanOrEqual(1_000);
    expect((await fires(quiet)).fires).toEqual([]);
    const stats = (await api.request('GET', `/agents/${agent.id}`)).body;
    expect(stats.invocation_metrics.by_source[0].slice(0, 1)).toEqual(['Cron']);
    const metrics = (await api.request('GET', '/metrics')).body as string;
    expect(metrics).toMatch(/schedule_fires_total\{outcome="fired"\} [1-9]/);
    expect(metrics).toContain('schedule_fire_lateness_seconds_bucket');
  });

  it('refuses and records the fires of a schedule whose agent was suspended (D9), never dropping them silently', async () => {
    const api = await start();
    const agent = await insertAgent(api);
    const id = (
      await api.request('POST', '/cron/jobs', { body: { agent_id: agent.id, every_secs: 1, prompt: 'p' } })
    ).body.id;
    expect((await api.request('POST', `/agents/${agent.id}/suspend`)).status).toBe(200);
    // A fire already in flight when the suspension lands is aborted ('... was suspended', with its
    // lateness); the fires after it are refused before they start (no lateness).
    type Fire = { outcome: string; late_ms: number | null; reason?: string };
    const refusals = async (): Promise<Fire[]> => (await fires(id)).fires.filter((f: Fire) => f.outcome === 'refused');
    await waitUntil(async () => (await refusals()).some((f) => f.late_ms === null), { timeoutMs: 5_000, message: 'a refused fire' });
    for (const f of await refusals()) expect(f.reason).toMatch(/^InvalidState: .*(Suspended|was suspended)/);
    const refused = (await refusals()).find((f) => f.late_ms === null);
    expect(refused).toMatchObject({
      trigger: 'schedule',
      reason: expect.stringMatching(/^InvalidState: .*Suspended/),
      late_ms: null,
      finished_at: expect.stringMatching(ISO),
    });
    expect((await api.request('GET', '/metrics')).body).toMatch(
      /schedule_fires_total\{outcome="refused"\} [1-9]/,
    );
  });
});
