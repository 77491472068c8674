import { Queues } from '@agent-platform/contracts';
import { agentFixture } from '@agent-platform/domain/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../testing/index.ts';

// Spec §Endpoints "Schedules and cron jobs" over real HTTP: both surfaces, one store, every error
// case, and the queue's schedulers following each change (no scheduler runs here: firing is
// tested in apps/scheduler and apps/platform).
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

let api: TestApi;
let token: string;
let agent: string;

beforeEach(async () => {
  api = await startTestApi({ config: { auth: { mode: 'local' }, agents: { max_message_bytes: 1024 } } });
  token = await api.issueKey('operator');
  agent = (await api.deps.agents.insert(agentFixture())).id;
});
afterEach(async () => {
  await api.close();
});


const call = (method: string, path: string, body?: unknown) =>
  api.request(method, path, { token, ...(body === undefined ? {} : { body }) });
const schedulers = async () =>
  (await api.deps.queue.listSchedulers(Queues.schedules)).map((s) => s.id).sort();
const allJobs = async () =>
  (await call('GET', '/cron/jobs')).body.jobs as Array<{ id: string; enabled: boolean }>;
const ISO = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

describe('creating and listing: one store for both surfaces', () => {
  it('answers 201 {id} and 201 {id, agent_id}, and each surface lists what the other created', async () => {
    const viaSchedule = await call('POST', `/agents/${agent}/schedules`, {
      expression: '0 9 * * 1-5',
      prompt: 'Morning FNOL digest',
      agent_id: UNKNOWN,
    });
    expect(viaSchedule.status).toBe(201);
    expect(viaSchedule.body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const viaCron = await call('POST', '/cron/jobs', {
      agent_id: agent,
      expression: '*/15 * * * *',
      tz: 'America/Chicago',
      prompt: 'Check the claims queue',
    });
    expect(viaCron.status).toBe(201);
    expect(viaCron.body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), agent_id: agent });

    const schedules = (await call('GET', `/agents/${agent}/schedules`)).body.schedules;
    expect(schedules).toEqual([
      {
        id: viaSchedule.body.id,
        // The body's agent_id was ignored (spec): the path names the agent.
        agent_id: agent,
        name: 'schedule',
        enabled: true,
        schedule: { kind: 'cron', expr: '0 9 * * 1-5', tz: null },
        action: {
          kind: 'agent_turn',
          message: 'Morning FNOL digest',
          model_override: null,
          timeout_secs: null,
        },
        created_at: ISO,
        last_run: null,
        next_run: ISO,
      },
      expect.objectContaining({
        id: viaCron.body.id,
        name: 'cron',
        schedule: { kind: 'cron', expr: '*/15 * * * *', tz: 'America/Chicago' },
      }),
    ]);
    expect(new Date(schedules[0].next_run).getUTCHours()).toBe(9);
    expect((await allJobs()).map((j) => j.id)).toEqual([viaSchedule.body.id, viaCron.body.id]);
    expect(await schedulers()).toEqual([viaSchedule.body.id, viaCron.body.id].sort());
  });

  it('creates `every` and `at` schedules from every_secs or at instead of expression', async () => {
    const every = await call('POST', `/agents/${agent}/schedules`, { every_secs: 3600, prompt: 'hourly' });
    const at = await call('POST', '/cron/jobs', {
      agent_id: agent,
      at: '2040-06-01T09:30:00+02:00',
      prompt: 'once',
    });
    expect([every.status, at.status]).toEqual([201, 201]);
    const jobs = (await call('GET', `/agents/${agent}/schedules`)).body.schedules;
    expect(jobs.map((j: { schedule: unknown }) => j.schedule)).toEqual([
      { kind: 'every', every_secs: 3600 },
      { kind: 'at', at: '2040-06-01T07:30:00.000Z' },
    ]);
    expect(jobs[1].next_run).toBe('2040-06-01T07:30:00.000Z');
  });

  it('refuses bad input with the spec errors, and bad input changes nothing', async () => {
    await call('POST', `/agents/${agent}/schedules`, { expression: '0 9 * * *', prompt: 'kept' });
    const before = { jobs: await allJobs(), schedulers: await schedulers() };
    const expectError = async (
      res: Awaited<ReturnType<typeof call>>,
      status: number,
      category: string,
      named: string,
    ) => {
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      expect(res.body.error.category).toBe(category);
      expect(res.body.error.message).toContain(named);
    };
    for (const create of [
      (body: object) => call('POST', `/agents/${agent}/schedules`, body),
      (body: object) => call('POST', '/cron/jobs', { agent_id: agent, ...body }),
    ]) {
      await expectError(await create({ expression: '0 9 * * *' }), 400, 'ValidationError', 'prompt');
      await expectError(await create({ prompt: 'p' }), 400, 'ValidationError', 'expression');
      await expectError(
        await create({ expression: 'every day at nine', prompt: 'p' }),
        400,
        'ValidationError',
        'every day at nine',
      );
      await expectError(
        await create({ expression: '* * * *', prompt: 'p' }),
        400,
        'ValidationError',
        '5 or 6 fields',
      );
      await expectError(
        await create({ expression: '0 9 * * *', tz: 'Mars/Olympus', prompt: 'p' }),
        400,
        'ValidationError',
        'Mars/Olympus',
      );
      await expectError(
        await create({ expression: '0 9 * * *', every_secs: 60, prompt: 'p' }),
        400,
        'ValidationError',
        'exactly one',
      );
      await expectError(
        await create({ at: 'next tuesday', prompt: 'p' }),
        400,
        'ValidationError',
        'next tuesday',
      );
      await expectError(
        await create({ expression: '0 9 * * *', prompt: 'p', overlap: 'queue' }),
        400,
        'ValidationError',
        'allow',
      );
      await expectError(await create({ expression: 5, prompt: 'p' }), 422, 'MalformedBody', 'expression');
      await expectError(
        await create({ expression: '0 9 * * *', prompt: 'x'.repeat(1025) }),
        413,
        'SizeLimitExceeded',
        'max_message_bytes',
      );
    }
    await expectError(
      await call('POST', `/agents/${UNKNOWN}/schedules`, { expression: '0 9 * * *', prompt: 'p' }),
      404,
      'NotFound',
      UNKNOWN,
    );
    await expectError(
      await call('POST', '/cron/jobs', { agent_id: UNKNOWN, expression: '0 9 * * *', prompt: 'p' }),
      404,
      'NotFound',
      UNKNOWN,
    );
    await expectError(
      await call('POST', '/agents/not-a-uuid/schedules', { expression: '0 9 * * *', prompt: 'p' }),
      400,
      'ValidationError',
      'invalid agent id',
    );
    await expectError(
      await call('POST', '/cron/jobs', { agent_id: 'not-a-uuid', expression: '0 9 * * *', prompt: 'p' }),
      400,
      'ValidationError',
      'invalid agent id',
    );
    expect(await allJobs()).toEqual(before.jobs);
    expect(await schedulers()).toEqual(before.schedulers);
  });

  it('answers a missing agent_id on POST /cron/jobs with the flat 400 body {error} (spec §Errors)', async () => {
    const missing = await call('POST', '/cron/jobs', { expression: '0 9 * * *', prompt: 'p' });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ error: "missing required field 'agent_id'" });
    const alsoNoPrompt = await call('POST', '/cron/jobs', { expression: '0 9 * * *' });
    expect(alsoNoPrompt.body).toEqual({ error: "missing required field 'agent_id'" });
    const noBody = await call('POST', '/cron/jobs');
    expect([noBody.status, noBody.body]).toEqual([400, { error: "missing required field 'agent_id'" }]);
    // Any other error of the route keeps the envelope.
    expect(
      (await call('POST', '/cron/jobs', { agent_id: agent, expression: '0 9 * * *' })).body.error.category,
    ).toBe('ValidationError');
    expect(await allJobs()).toEqual([]);
  });

  it('lists 404 for an unknown agent and 400 for a malformed agent id', async () => {
    expect((await call('GET', `/agents/${UNKNOWN}/schedules`)).status).toBe(404);
    const bad = await call('GET', '/agents/abc/schedules');
    expect([bad.status, bad.body.error.message]).toEqual([400, "invalid agent id 'abc': must be a UUID"]);
  });
});

describe('pausing, enabling and deleting', () => {
  it('pause and resume answer {status: paused|active} and take the job off the queue and back at once', async () => {
    const id = (await call('POST', `/agents/${agent}/schedules`, { every_secs: 60, prompt: 'p' })).body.id;
    const paused = await call('POST', `/schedules/${id}/pause`);
    expect([paused.status, paused.body]).toEqual([200, { status: 'paused' }]);
    expect(await schedulers()).toEqual([]);
    expect(await allJobs()).toEqual([expect.objectContaining({ id, enabled: false, next_run: null })]);
    const resumed = await call('POST', `/schedules/${id}/resume`);
    expect([resumed.status, resumed.body]).toEqual([200, { status: 'active' }]);
    expect(await schedulers()).toEqual([id]);
    expect(await allJobs()).toEqual([expect.objectContaining({ id, enabled: true, next_run: ISO })]);
  });

  it('PUT .../enable toggles from either surface; without a body it enables', async () => {
    const id = (await call('POST', '/cron/jobs', { agent_id: agent, every_secs: 60, prompt: 'p' })).body.id;
    expect((await call('PUT', `/cron/jobs/${id}/enable`, { enabled: false })).body).toEqual({
      status: 'disabled',
    });
    expect(await schedulers()).toEqual([]);
    expect((await call('GET', `/agents/${agent}/schedules`)).body.schedules[0].enabled).toBe(false);
    expect((await call('PUT', `/cron/jobs/${id}/enable`)).body).toEqual({ status: 'enabled' });
    expect(await schedulers()).toEqual([id]);
    // Condition jobs share the store: the condition route toggles the same record by id.
    expect((await call('PUT', `/conditions/jobs/${id}/enable`, { enabled: false })).body).toEqual({
      status: 'disabled',
    });
    expect(await schedulers()).toEqual([]);
    expect((await call('PUT', `/conditions/jobs/${id}/enable`, {})).body).toEqual({ status: 'enabled' });
    expect(await schedulers()).toEqual([id]);
    const wrongType = await call('PUT', `/cron/jobs/${id}/enable`, { enabled: 'no' });
    expect([wrongType.status, wrongType.body.error.category]).toEqual([422, 'MalformedBody']);
    expect(await schedulers()).toEqual([id]);
  });

  it('deletes through either surface (204); the other no longer sees it; the queue lets it go', async () => {
    const a = (await call('POST', `/agents/${agent}/schedules`, { every_secs: 60, prompt: 'a' })).body.id;
    const b = (await call('POST', '/cron/jobs', { agent_id: agent, every_secs: 60, prompt: 'b' })).body.id;
    const deletedA = await call('DELETE', `/cron/jobs/${a}`);
    expect([deletedA.status, deletedA.body]).toEqual([204, '']);
    expect((await call('DELETE', `/schedules/${b}`)).status).toBe(204);
    expect(await allJobs()).toEqual([]);
    expect(await schedulers()).toEqual([]);
    const again = await call('DELETE', `/schedules/${b}`);
    expect([again.status, again.body.error.category]).toEqual([404, 'NotFound']);
  });

  it('answers unknown ids 404 NotFound and malformed ids 400 naming the id kind, on every id route', async () => {
    for (const [method, path, kind] of [
      ['POST', '/schedules/:id/pause', 'schedule'],
      ['POST', '/schedules/:id/resume', 'schedule'],
      ['DELETE', '/schedules/:id', 'schedule'],
      ['GET', '/schedules/:id/fires', 'schedule'],
      ['DELETE', '/cron/jobs/:id', 'cron job'],
      ['PUT', '/cron/jobs/:id/enable', 'cron job'],
      ['POST', '/cron/jobs/:id/run', 'cron job'],
      ['PUT', '/conditions/jobs/:id/enable', 'condition job'],
    ] as const) {
      const unknown = await call(method, path.replace(':id', UNKNOWN));
      expect([unknown.status, unknown.body.error.category], `${method} ${path}`).toEqual([404, 'NotFound']);
      expect(unknown.body.error.message).toBe(`${kind} '${UNKNOWN}' not found`);
      const malformed = await call(method, path.replace(':id', 'sched-1'));
      expect([malformed.status, malformed.body.error.message], `${method} ${path}`).toEqual([
        400,
        `invalid ${kind} id 'sched-1': must be a UUID`,
      ]);
    }
  });
});

describe('GET /schedules/{id}/fires', () => {
  it('answers the job overlap policy and an empty history before any fire', async () => {
    const id = (
      await call('POST', `/agents/${agent}/schedules`, { every_secs: 60, prompt: 'p', overlap: 'allow' })
    ).body.id;
    const res = await call('GET', `/schedules/${id}/fires?limit=5`);
    expect([res.status, res.body]).toEqual([
      200,
      { schedule_id: id, overlap: 'allow', missed_slots: 0, fires: [] },
    ]);
    expect((await call('GET', `/schedules/${id}/fires?limit=0`)).status).toBe(400);
  });
});

describe('roles (spec §Authentication)', () => {
  it('lets operators manage schedules and refuses viewers and developers with the flat 403', async () => {
    const viewer = await api.issueKey('viewer', 'viewer');
    const developer = await api.issueKey('developer', 'developer');
    for (const who of [viewer, developer]) {
      const refused = await api.request('POST', `/agents/${agent}/schedules`, {
        token: who,
        body: { every_secs: 60, prompt: 'p' },
      });
      expect([refused.status, refused.body.error]).toEqual([403, 'forbidden']);
      expect(refused.body.message).toContain('ScheduleCreate');
    }
    expect((await api.request('GET', `/agents/${agent}/schedules`, { token: viewer })).status).toBe(200);
    expect(await allJobs()).toEqual([]);
  });
});
