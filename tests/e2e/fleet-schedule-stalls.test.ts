import { fileURLToPath } from 'node:url';
import { CRON_FIRES_COLLECTION, type FireRecord } from '@agent-platform/domain';
import type { Store } from '@agent-platform/store';
import { requireBinary, waitUntil, type RecordedRequest } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoReply, startFleet, type AppProcess, type Fleet } from '../support/fleet.ts';
import { call } from '../support/platform-process.ts';

// A schedule slot whose scheduler dies at every attempt (issue 21 item 9): one api node, one agent
// worker and one scheduler over NATS and Redis (BullMQ), `[schedules] fire_attempts = 2`. The model
// holds the fire's invocation long; each time the slot's fire is in flight, the scheduler holding
// it is SIGKILLed and a fresh one started. The first lost run counts as the fire's attempt 1 (a
// retry follows), the second as its last: the slot is recorded `failed`, never left `running`
// (BullMQ's default failed the job at its second stall, leaving the entry `running` for good).
const CLAIMS_INTAKE = fileURLToPath(new URL('../../examples/claims-intake', import.meta.url));
const natsBinary = requireBinary('nats-server');
const redisBinary = requireBinary('redis-server');
const PROMPT = 'stalled beat';

function slowStalledBeat(request: RecordedRequest) {
  const answer = echoReply(request);
  return 'text' in answer && answer.text?.includes(PROMPT) === true ? { ...answer, delay_ms: 90_000 } : answer;
}

describe.skipIf(natsBinary === null || redisBinary === null)('a schedule slot whose scheduler is SIGKILLed at every attempt', () => {
  let fleet: Fleet;
  let token: string;
  let agent: string;
  let store: Store | undefined;

  beforeAll(async () => {
    fleet = await startFleet({
      apis: 1,
      workers: 1,
      schedulers: 1,
      reply: slowStalledBeat,
      config: {
        agents: { invocation_timeout_secs: 120 },
        schedules: { fire_attempts: 2, fire_backoff_ms: 100 },
        runtime: { queue_job_lock_secs: 2 },
      },
    });
    token = (await call(fleet.urls[0]!, 'POST', '/auth/keys', { body: { name: 'admin', role: 'admin' } })).body.secret;
    const install = await call(fleet.urls[0]!, 'POST', '/catalog/install', { token, body: { path: CLAIMS_INTAKE, activate: true } });
    expect(install.status).toBe(201);
    agent = install.body.installed[2].id;
  }, 180_000);

  afterAll(async () => {
    await store?.close();
    await fleet?.close();
  });

  it('counts each lost run as an attempt and records the slot failed when the last one is lost', async () => {
    const at = new Date(Date.now() + 1_000).toISOString();
    const created = await call(fleet.urls[0]!, 'POST', '/cron/jobs', { token, body: { agent_id: agent, at, prompt: PROMPT } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as string;
    store = await fleet.openStore();
    const fireLog = store.collection<FireRecord>(CRON_FIRES_COLLECTION, { ttlField: 'expires_at' });
    const entry = async (): Promise<FireRecord | undefined> => (await fireLog.find({ where: { schedule_id: id } }))[0]?.doc;

    const schedulers: AppProcess[] = [...fleet.schedulers];
    for (let attempt = 1; attempt <= 2; attempt++) {
      // The fire of this attempt is in flight: its entry is running, taken by this scheduler (a
      // retry waits on the first invocation, which the model holds, under the slot's key).
      const pid = schedulers[0]!.child.pid!;
      await waitUntil(async () => {
        const fire = await entry();
        return fire?.outcome === 'running' && fire.taken_by?.endsWith(`:${pid}`) === true;
      }, { timeoutMs: 60_000, intervalMs: 50, message: `the fire's attempt ${attempt} in flight on scheduler ${pid} (${JSON.stringify(await entry())})` });
      const victim = schedulers.shift()!;
      await victim.kill();
      schedulers.push(await fleet.add('scheduler'));
    }

    await waitUntil(async () => (await entry())?.outcome === 'failed', {
      timeoutMs: 60_000,
      intervalMs: 200,
      message: `the slot recorded failed (${JSON.stringify(await entry())})`,
    });
    expect(await entry()).toMatchObject({ outcome: 'failed', attempts: 2, reason: expect.stringMatching(/attempt 2 was lost with its scheduler/) });
    const fires = (await call(fleet.urls[0]!, 'GET', `/schedules/${id}/fires`, { token })).body.fires as Array<{ outcome: string }>;
    expect(fires.map((f) => f.outcome)).toEqual(['failed']);
  }, 240_000);
});
