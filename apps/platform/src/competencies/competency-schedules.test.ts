import { afterEach, describe, expect, it } from 'vitest';
import { startCompetencyHarness, type CompetencyHarness } from './competency-fixture.ts';

// Scheduled competencies over HTTP against the all-in-one (docs/competencies.md "Schedules"):
// equipping creates one cron job per agent, upgrades and uninstalls keep it in line, schedule-
// health reports drift and reset-schedule repairs it.
let h: CompetencyHarness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

const SCHEDULED = (expr: string, action = 'Review the open claims.') =>
  `schedule: "${expr}"\nschedule_action: ${action}`;

interface Job {
  id: string;
  agent_id: string;
  name: string;
  enabled: boolean;
  schedule: { kind: string; expr?: string; tz?: string | null };
  action: { message: string };
}

async function start(): Promise<CompetencyHarness> {
  h = await startCompetencyHarness();
  await h.install({ type: 'competency', name: 'daily-review', frontmatter: SCHEDULED('0 9 * * 1-5') });
  return h;
}

const jobs = async (harness: CompetencyHarness): Promise<Job[]> =>
  (await harness.api.request('GET', '/cron/jobs')).body.jobs;
const drift = async (harness: CompetencyHarness) => {
  const res = await harness.api.request('GET', '/competencies/schedule-health');
  expect(res.status).toBe(200);
  return res.body.drift;
};

describe('equipping a scheduled competency', () => {
  it('creates one cron job per equipping agent, owned by the competency, and no drift', async () => {
    const harness = await start();
    const first = await harness.install({
      type: 'agent-template',
      name: 'claims-intake',
      competencies: ['daily-review'],
    });
    const second = await harness.install({
      type: 'agent-template',
      name: 'claims-desk',
      competencies: ['daily-review'],
    });
    await harness.install({ type: 'agent-template', name: 'no-schedule', competencies: [] });

    const all = await jobs(harness);
    expect(all).toHaveLength(2);
    for (const agentId of [first, second]) {
      expect(all).toContainEqual(
        expect.objectContaining({
          agent_id: agentId,
          name: 'competency:daily-review',
          enabled: true,
          schedule: { kind: 'cron', expr: '0 9 * * 1-5', tz: null },
          action: expect.objectContaining({ kind: 'agent_turn', message: 'Review the open claims.' }),
        }),
      );
    }
    expect((await harness.api.request('GET', `/agents/${first}/schedules`)).body.schedules).toHaveLength(1);
    expect(await drift(harness)).toEqual([]);
  });

  it('fires schedule_action at the agent (the local model echoes it)', async () => {
    const harness = await start();
    await harness.install(
      { type: 'agent-template', name: 'claims-intake', competencies: ['daily-review'] },
      { activate: true },
    );
    const [job] = await jobs(harness);
    const res = await harness.api.request('POST', `/cron/jobs/${job!.id}/run`);
    expect(res.status).toBe(200);
    expect(res.body.content).toBe('Review the open claims.');
  });

  it('follows upgrades: a new schedule replaces the job, unequipping removes it', async () => {
    const harness = await start();
    const agentId = await harness.install({
      type: 'agent-template',
      name: 'claims-intake',
      competencies: ['daily-review'],
    });
    await harness.install({
      type: 'competency',
      name: 'daily-review',
      version: '1.1.0',
      frontmatter: SCHEDULED('30 7 * * *', 'Morning digest.'),
    });
    let [job] = await jobs(harness);
    expect(job).toMatchObject({
      agent_id: agentId,
      schedule: { expr: '30 7 * * *' },
      action: { message: 'Morning digest.' },
    });
    expect(await jobs(harness)).toHaveLength(1);

    // An agent upgrade that equips the same competency leaves the job as it is (same id).
    await harness.install({
      type: 'agent-template',
      name: 'claims-intake',
      version: '1.1.0',
      competencies: ['daily-review'],
    });
    expect((await jobs(harness)).map((j) => j.id)).toEqual([job!.id]);

    await harness.install({
      type: 'agent-template',
      name: 'claims-intake',
      version: '1.2.0',
      competencies: [],
    });
    expect(await jobs(harness)).toEqual([]);
    await harness.install({
      type: 'agent-template',
      name: 'claims-intake',
      version: '1.3.0',
      competencies: ['daily-review'],
    });
    [job] = await jobs(harness);
    expect(job).toMatchObject({ agent_id: agentId, name: 'competency:daily-review' });

    // A competency upgrade that drops the schedule removes the job.
    await harness.install({ type: 'competency', name: 'daily-review', version: '2.0.0' });
    expect(await jobs(harness)).toEqual([]);
    expect(await drift(harness)).toEqual([]);
  });

  it('keeps a job the operator paused paused across an upgrade that changes the schedule', async () => {
    const harness = await start();
    await harness.install({ type: 'agent-template', name: 'claims-intake', competencies: ['daily-review'] });
    const [job] = await jobs(harness);
    expect(
      (await harness.api.request('PUT', `/cron/jobs/${job!.id}/enable`, { body: { enabled: false } })).status,
    ).toBe(200);
    await harness.install({
      type: 'competency',
      name: 'daily-review',
      version: '1.1.0',
      frontmatter: SCHEDULED('0 18 * * *'),
    });
    expect(await jobs(harness)).toEqual([
      expect.objectContaining({ enabled: false, schedule: expect.objectContaining({ expr: '0 18 * * *' }) }),
    ]);
  });

  it('removes the jobs when the agent or the competency is uninstalled; other jobs of the agent stay', async () => {
    const harness = await start();
    const first = await harness.install({
      type: 'agent-template',
      name: 'claims-intake',
      competencies: ['daily-review'],
    });
    const second = await harness.install({
      type: 'agent-template',
      name: 'claims-desk',
      competencies: ['daily-review'],
    });
    const own = await harness.api.request('POST', `/agents/${second}/schedules`, {
      body: { expression: '0 12 * * *', prompt: 'Lunch report' },
    });
    expect(own.status).toBe(201);

    expect((await harness.api.request('DELETE', '/catalog/installed/claims-intake')).status).toBe(204);
    expect((await jobs(harness)).map((j) => [j.agent_id, j.name])).toEqual([
      [second, 'competency:daily-review'],
      [second, 'schedule'],
    ]);
    expect(first).not.toBe(second);

    expect((await harness.api.request('DELETE', '/catalog/installed/daily-review')).status).toBe(204);
    expect((await jobs(harness)).map((j) => j.name)).toEqual(['schedule']);
    expect(await drift(harness)).toEqual([]);
  });
});

describe('schedule-health and reset-schedule', () => {
  it('reports a deleted job as missing and reset-schedule creates it again', async () => {
    const harness = await start();
    const agentId = await harness.install({
      type: 'agent-template',
      name: 'claims-intake',
      competencies: ['daily-review'],
    });
    const [job] = await jobs(harness);
    expect((await harness.api.request('DELETE', `/cron/jobs/${job!.id}`)).status).toBe(204);

    expect(await drift(harness)).toEqual([
      {
        agent_id: agentId,
        competency_id: 'daily-review',
        problem: 'missing',
        expected: {
          job_id: null,
          expression: '0 9 * * 1-5',
          tz: null,
          message: 'Review the open claims.',
          enabled: true,
        },
        actual: null,
      },
    ]);
    const reset = await harness.api.request(
      'POST',
      `/agents/${agentId}/competencies/daily-review/reset-schedule`,
    );
    expect(reset.status).toBe(200);
    expect(reset.body).toEqual({ status: 'reset' });
    expect(await jobs(harness)).toEqual([
      expect.objectContaining({ agent_id: agentId, name: 'competency:daily-review', enabled: true }),
    ]);
    expect(await drift(harness)).toEqual([]);
  });

  it('reports a paused job as disabled; reset-schedule enables the same job', async () => {
    const harness = await start();
    const agentId = await harness.install({
      type: 'agent-template',
      name: 'claims-intake',
      competencies: ['daily-review'],
    });
    const [job] = await jobs(harness);
    await harness.api.request('POST', `/schedules/${job!.id}/pause`);
    expect(await drift(harness)).toEqual([
      expect.objectContaining({
        problem: 'disabled',
        actual: {
          job_id: job!.id,
          expression: '0 9 * * 1-5',
          tz: null,
          message: 'Review the open claims.',
          enabled: false,
        },
      }),
    ]);
    expect(
      (await harness.api.request('POST', `/agents/${agentId}/competencies/daily-review/reset-schedule`))
        .status,
    ).toBe(200);
    expect(await jobs(harness)).toEqual([expect.objectContaining({ id: job!.id, enabled: true })]);
    expect(await drift(harness)).toEqual([]);
  });

  it('reports a job with another cron or message, and an extra job; reset-schedule leaves exactly the manifest binding', async () => {
    const harness = await start();
    const agentId = await harness.install({
      type: 'agent-template',
      name: 'claims-intake',
      competencies: ['daily-review'],
    });
    const [original] = await jobs(harness);
    await harness.api.request('DELETE', `/cron/jobs/${original!.id}`);
    // Fault injection: jobs left by an earlier version, as a failed equip effect would leave them.
    const schedules = harness.api.deps.schedules;
    const stale = await schedules.create(
      agentId,
      { expression: '0 10 * * *', prompt: 'Review the open claims.' },
      'competency:daily-review',
    );
    const wording = await schedules.create(
      agentId,
      { expression: '0 9 * * 1-5', prompt: 'Old wording.' },
      'competency:daily-review',
    );

    const found = await drift(harness);
    expect(found).toEqual([
      expect.objectContaining({
        agent_id: agentId,
        competency_id: 'daily-review',
        problem: 'schedule_differs',
        actual: expect.objectContaining({ job_id: stale.id, expression: '0 10 * * *' }),
      }),
      expect.objectContaining({
        problem: 'extra',
        expected: null,
        actual: expect.objectContaining({ job_id: wording.id, message: 'Old wording.' }),
      }),
    ]);

    expect(
      (await harness.api.request('POST', `/agents/${agentId}/competencies/daily-review/reset-schedule`))
        .status,
    ).toBe(200);
    const after = await jobs(harness);
    expect(after).toEqual([
      expect.objectContaining({
        name: 'competency:daily-review',
        schedule: { kind: 'cron', expr: '0 9 * * 1-5', tz: null },
        action: expect.objectContaining({ message: 'Review the open claims.' }),
      }),
    ]);
    expect([stale.id, wording.id]).not.toContain(after[0]!.id);
    expect(await drift(harness)).toEqual([]);
  });

  it('reports a job whose message alone differs as action_differs', async () => {
    const harness = await start();
    const agentId = await harness.install({
      type: 'agent-template',
      name: 'claims-intake',
      competencies: ['daily-review'],
    });
    const [original] = await jobs(harness);
    await harness.api.request('DELETE', `/cron/jobs/${original!.id}`);
    await harness.api.deps.schedules.create(
      agentId,
      { expression: '0 9 * * 1-5', prompt: 'Old wording.' },
      'competency:daily-review',
    );
    expect((await drift(harness)).map((d: { problem: string }) => d.problem)).toEqual(['action_differs']);
  });

  it('reset-schedule answers 404 for a competency the agent does not equip or an unknown agent, 400 for a malformed id', async () => {
    const harness = await start();
    const agentId = await harness.install({
      type: 'agent-template',
      name: 'claims-intake',
      competencies: [],
    });
    const notEquipped = await harness.api.request(
      'POST',
      `/agents/${agentId}/competencies/daily-review/reset-schedule`,
    );
    expect(notEquipped.status).toBe(404);
    expect(notEquipped.body.error.message).toContain('does not equip');
    expect(
      (
        await harness.api.request(
          'POST',
          '/agents/00000000-0000-4000-8000-000000000000/competencies/daily-review/reset-schedule',
        )
      ).status,
    ).toBe(404);
    const bad = await harness.api.request('POST', '/agents/nope/competencies/daily-review/reset-schedule');
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('invalid agent id');
    expect(await jobs(harness)).toEqual([]);
  });
});
