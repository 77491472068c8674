import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, waitUntil } from '@agent-platform/testkit';
import { stringify } from 'smol-toml';
import { afterAll, describe, expect, it } from 'vitest';
import { writeLicence } from '../support/fleet.ts';
import { call, startPlatform, type PlatformProcess } from '../support/platform-process.ts';
import { parseEventStream } from '../../apps/platform/src/testing/platform-test-api.ts';

// README "Run a workflow, watch it, and kill the process under it", as a user does it: install
// examples/claims-review, run it, watch its events, then with a slow `local` model kill -9 the
// all-in-one process mid-run, start it again, and see the run end with the same output. Then
// README "Schedule a prompt" on the same platform.
const EXAMPLE = fileURLToPath(new URL('../../examples/claims-review', import.meta.url));
const INPUT = 'Burst pipe flooded the kitchen, policy HO-1234';
let dir: string | undefined;
let platform: PlatformProcess | undefined;

afterAll(async () => {
  platform?.kill();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('README workflow and schedule tour against the all-in-one platform', () => {
  it('install, run, events; a slow model, kill -9 mid-run, restart, the run completes; a schedule fires', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ap-wf-tour-'));
    const configPath = join(dir, 'agent-platform.toml');
    const config = { server: { listen: `127.0.0.1:${await freePort()}` }, storage: { data_dir: join(dir, 'data') }, auth: { mode: 'local' }, licence: await writeLicence(dir, {}) };
    await writeFile(configPath, stringify(config));
    platform = startPlatform(dir, ['--config', configPath]);
    const B = await platform.listening();
    const token: string = (await call(B, 'POST', '/auth/keys', { body: { name: 'admin', role: 'admin' } })).body.secret;

    const install = await call(B, 'POST', '/catalog/install', { token, body: { path: EXAMPLE, activate: true } });
    expect(install.status, JSON.stringify(install.body)).toBe(201);
    const last = install.body.installed.at(-1);
    expect(last).toMatchObject({ type: 'workflow-template', name: 'claims-review' });
    const WF: string = last.id;
    const definition = (await call(B, 'GET', `/workflows/${WF}`, { token })).body;
    expect(definition.admission_state).toBe('active');
    expect(definition.steps.map((s: { mode: unknown }) => s.mode)).toEqual(['Sequential', 'FanOut', 'FanOut', 'Collect', 'Sequential']);

    const started = await call(B, 'POST', `/workflows/${WF}/run`, { token, body: { input: INPUT } });
    expect(started.status).toBe(201);
    const events = parseEventStream((await call(B, 'GET', `/runs/${started.body.id}/events`, { token })).text);
    expect(events.map((e) => e.event).filter((e) => e !== 'step' && e !== 'state')).toEqual(['run', 'end']);
    const control = JSON.parse(events.at(-1)!.data);
    expect(control.state).toBe('Completed');
    expect(control.step_results.map((r: { step_name: string }) => r.step_name)).toEqual(['summarise', 'coverage-check', 'fraud-screen', 'findings', 'recommend']);
    expect((await call(B, 'GET', '/runs?state=Completed', { token })).body.runs.map((r: { id: string }) => r.id)).toContain(started.body.id);

    // A slow model, a restart, and a kill -9 while a run is between its steps.
    await appendFile(configPath, '\n[[providers]]\nid = "local"\ndelay_ms = 400\n');
    platform.child.kill('SIGINT');
    await platform.exited;
    platform = startPlatform(dir, ['--config', configPath]);
    await platform.listening();
    const RUN: string = (await call(B, 'POST', `/workflows/${WF}/run`, { token, body: { input: INPUT } })).body.id;
    await waitUntil(async () => (await call(B, 'GET', `/runs/${RUN}`, { token })).body.step_results.length >= 1, {
      timeoutMs: 20_000,
      message: 'the first step to be checkpointed',
    });
    platform.kill();
    await platform.exited;
    platform = startPlatform(dir, ['--config', configPath]);
    await platform.listening();

    const resumed = parseEventStream((await call(B, 'GET', `/runs/${RUN}/events`, { token })).text);
    const final = JSON.parse(resumed.at(-1)!.data);
    expect(resumed.at(-1)!.event).toBe('end');
    expect(final).toMatchObject({ state: 'Completed', output: control.output });
    expect(final.step_results.map((r: { output: string }) => r.output)).toEqual(control.step_results.map((r: { output: string }) => r.output));

    // README "Schedule a prompt": a schedule on the agent fires by itself, then on demand, then pauses.
    const AGENT: string = install.body.installed.find((p: { name: string }) => p.name === 'claims-intake').id;
    const created = await call(B, 'POST', `/agents/${AGENT}/schedules`, { token, body: { every_secs: 1, prompt: 'Any new FNOL claims?' } });
    expect(created.status).toBe(201);
    const SCHEDULE: string = created.body.id;
    await waitUntil(async () => (await call(B, 'GET', `/schedules/${SCHEDULE}/fires`, { token })).body.fires.some((f: { outcome: string }) => f.outcome === 'fired'), {
      timeoutMs: 20_000,
      message: 'the schedule to fire',
    });
    const listed = (await call(B, 'GET', `/agents/${AGENT}/schedules`, { token })).body.schedules;
    expect(listed).toHaveLength(1);
    expect(listed[0].last_run).not.toBeNull();
    const now = await call(B, 'POST', `/cron/jobs/${SCHEDULE}/run`, { token });
    expect(now.status).toBe(200);
    expect(now.body.source.Cron.schedule_id).toBe(SCHEDULE);
    expect((await call(B, 'POST', `/schedules/${SCHEDULE}/pause`, { token })).body).toEqual({ status: 'paused' });
    expect((await call(B, 'GET', '/cron/jobs', { token })).body.jobs.map((j: { id: string }) => j.id)).toContain(SCHEDULE);
    expect((await call(B, 'DELETE', `/schedules/${SCHEDULE}`, { token })).status).toBe(204);
  }, 120_000);
});
