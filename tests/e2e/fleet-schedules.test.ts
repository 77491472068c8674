import { fileURLToPath } from 'node:url';
import {
  CRON_FIRES_COLLECTION,
  IDEMPOTENCY_COLLECTION,
  type FireRecord,
  type IdempotencyRecord,
} from '@agent-platform/domain';
import type { Store } from '@agent-platform/store';
import { requireBinary, waitUntil, type RecordedRequest } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoReply, startFleet, type Fleet } from '../support/fleet.ts';
import { call } from '../support/platform-process.ts';

// Schedules in a fleet, started as an operator starts one (README "Running a fleet"): two api
// nodes, one agent worker and THREE schedulers over NATS and Redis (BullMQ). Schedules are made
// through one node and read through the other; one scheduler is SIGKILLed mid-way, and still
// every slot reaches the model exactly once: none twice, none lost.
const CLAIMS_INTAKE = fileURLToPath(new URL('../../examples/claims-intake', import.meta.url));
const natsBinary = requireBinary('nats-server');
const redisBinary = requireBinary('redis-server');

/** The model takes 1.5 s over a beat, so fires are in flight on every scheduler when one is killed. */
function slowBeats(request: RecordedRequest) {
  const answer = echoReply(request);
  return 'text' in answer && answer.text?.startsWith('fleet beat') === true
    ? { ...answer, delay_ms: 1_500 }
    : answer;
}

interface Fire {
  slot_at: string;
  trigger: string;
  outcome: string;
  reason: string | null;
  missed_count?: number;
  missed_until?: string | null;
}

describe.skipIf(natsBinary === null || redisBinary === null)(
  'schedules in a fleet: 2 api nodes, 1 worker, 3 schedulers',
  () => {
    let fleet: Fleet;
    let A: string;
    let B: string;
    let token: string;
    let agent: string;
    let store: Store | undefined;

    beforeAll(async () => {
      fleet = await startFleet({
        apis: 2,
        workers: 1,
        schedulers: 3,
        reply: slowBeats,
        config: { agents: { invocation_timeout_secs: 20 } },
      });
      [A, B] = fleet.urls as [string, string];
      token = (await call(A, 'POST', '/auth/keys', { body: { name: 'admin', role: 'admin' } })).body.secret;
      const install = await call(A, 'POST', '/catalog/install', {
        token,
        body: { path: CLAIMS_INTAKE, activate: true },
      });
      expect(install.status).toBe(201);
      agent = install.body.installed[2].id;
    }, 180_000);

    afterAll(async () => {
      await store?.close();
      await fleet?.close();
    });

    const firesOf = async (id: string): Promise<{ fires: Fire[]; missed_slots: number }> =>
      (await call(B, 'GET', `/schedules/${id}/fires?limit=500`, { token })).body;
    const firedSlots = async (id: string): Promise<string[]> =>
      (await firesOf(id)).fires
        .filter((f) => f.trigger === 'schedule' && f.outcome === 'fired')
        .map((f) => f.slot_at);
    /** Model calls answering `prompt` (the last user message: earlier turns ride along as session context). */
    const modelCalls = (prompt: string): number =>
      fleet.provider.requests.filter(
        (r) =>
          ((r.body?.messages ?? []) as Array<{ role: string; content: string }>)
            .filter((m) => m.role === 'user')
            .at(-1)?.content === prompt,
      ).length;

    it('fires schedules made through one node exactly once per slot, through a scheduler SIGKILLed mid-way', async () => {
      // overlap allow: with the default (skip), a fire the killed scheduler held would, correctly,
      // hold off its job's next slots for up to its 30 s lease; that policy is tested on its own.
      const one = await call(A, 'POST', '/cron/jobs', {
        token,
        body: { agent_id: agent, every_secs: 1, prompt: 'fleet beat one', overlap: 'allow' },
      });
      const two = await call(A, 'POST', `/agents/${agent}/schedules`, {
        token,
        body: { every_secs: 1, prompt: 'fleet beat two', overlap: 'allow' },
      });
      expect([one.status, two.status]).toEqual([201, 201]);
      const ids = [one.body.id as string, two.body.id as string];
      // Both visible through the other node (one store).
      expect(
        (await call(B, 'GET', '/cron/jobs', { token })).body.jobs.map((j: { id: string }) => j.id),
      ).toEqual(ids);

      await waitUntil(async () => (await firedSlots(ids[0]!)).length >= 4, {
        timeoutMs: 20_000,
        intervalMs: 100,
        message: `four fires (${fleet.logs()})`,
      });
      // The victim: a scheduler holding a fire in flight (each slot's entry names the process that took it).
      store = await fleet.openStore();
      const fireLog = store.collection<FireRecord>(CRON_FIRES_COLLECTION, { ttlField: 'expires_at' });
      let held: FireRecord | undefined;
      await waitUntil(
        async () => {
          const running = (await fireLog.find({ where: { outcome: 'running' } })).map((v) => v.doc);
          held = running.find((f) =>
            fleet.schedulers.some((p) => f.taken_by?.endsWith(`:${p.child.pid}`) === true),
          );
          return held !== undefined;
        },
        { timeoutMs: 10_000, intervalMs: 20, message: 'a fire in flight' },
      );
      const victim = fleet.schedulers.find((p) => held!.taken_by!.endsWith(`:${p.child.pid}`))!;
      await victim.kill();
      const killedAt = Date.now();
      await waitUntil(
        async () =>
          (await Promise.all(ids.map(firedSlots))).every(
            (slots) => slots.filter((s) => Date.parse(s) > killedAt).length >= 6,
          ),
        {
          timeoutMs: 30_000,
          intervalMs: 200,
          message: `six fires after the kill (${fleet.logs()})`,
        },
      );
      // The slot the killed scheduler held: BullMQ's stalled-job check finds its run lost (the
      // fleet's `queue_job_lock_secs` = 5: lock 5 s, checked every 5 s), counts it as an attempt
      // and hands it to `onLost`, which retries the fire by a retry job (same key). Settled before
      // the jobs are paused: a retry of a job paused meanwhile stops (docs/schedules.md).
      await waitUntil(async () => (await fireLog.get(held!.id))?.doc.outcome !== 'running', {
        timeoutMs: 45_000,
        intervalMs: 200,
        message: `the killed scheduler's fire to be retried (${fleet.logs()})`,
      });
      // A slot job the victim took but had not claimed yet is retried the same way, and may have
      // been counted missed by a later slot meanwhile: it fires with an entry of its own. Waited
      // for before the jobs are paused too (a slot retried after the pause is skipped, correctly).
      const unfilledGaps = async (): Promise<string[]> =>
        (
          await Promise.all(
            ids.map(async (id) => {
              const { fires } = await firesOf(id);
              const handled = new Set(
                fires.filter((f) => f.trigger === 'schedule' && f.outcome !== 'missed').map((f) => Date.parse(f.slot_at)),
              );
              return fires
                .filter((f) => f.outcome === 'missed')
                .flatMap((gap) => {
                  const open: string[] = [];
                  for (let t = Date.parse(gap.slot_at); t <= Date.parse(gap.missed_until ?? gap.slot_at); t += 1000)
                    if (!handled.has(t)) open.push(`${id} ${new Date(t).toISOString()}`);
                  return open;
                });
            }),
          )
        ).flat();
      let unfilled: string[] = [];
      await waitUntil(async () => (unfilled = await unfilledGaps()).length === 0, {
        timeoutMs: 45_000,
        intervalMs: 200,
        message: `the slots counted missed to fire (${fleet.logs()})`,
      }).catch((error: Error) => {
        throw new Error(`${error.message}; still open: ${unfilled.join(', ')}`);
      });
      for (const id of ids)
        expect(
          (await call(B, 'PUT', `/cron/jobs/${id}/enable`, { token, body: { enabled: false } })).body,
        ).toEqual({ status: 'disabled' });
      // Wait for every claim's outcome.
      await waitUntil(
        async () =>
          (await Promise.all(ids.map(firesOf))).every((l) => l.fires.every((f) => f.outcome !== 'running')),
        {
          timeoutMs: 45_000,
          intervalMs: 500,
          message: 'every fire to settle',
        },
      );

      for (const [i, id] of ids.entries()) {
        const log = await firesOf(id);
        const slots = (await firedSlots(id)).map(Date.parse).sort((x, y) => x - y);
        // Each slot recorded fired once, consecutive seconds from the first to the last, none missed.
        expect(new Set(slots).size, id).toBe(slots.length);
        expect(slots.at(-1)! - slots[0]!, id).toBe((slots.length - 1) * 1000);
        expect(
          log.fires.filter((f) => f.outcome === 'failed' || f.outcome === 'refused'),
          id,
        ).toEqual([]);
        // None missed for good. The one documented inexactness (docs/schedules.md "Catch-up after
        // downtime"): a slot the queue handed to the killed scheduler just before it died, overtaken
        // by a later slot, is counted missed and then fires when the queue runs it again; it is
        // then among the fired slots above, each exactly once.
        const missed = log.fires.filter((f) => f.outcome === 'missed');
        for (const gap of missed) {
          for (let at = Date.parse(gap.slot_at); at <= Date.parse(gap.missed_until ?? gap.slot_at); at += 1000) {
            expect(slots, `${id}: slot ${new Date(at).toISOString()} counted missed and never fired`).toContain(at);
          }
        }
        expect(log.missed_slots, id).toBe(missed.reduce((n, f) => n + (f.missed_count ?? 0), 0));
        // ...and reached the model exactly once each, under one settled idempotency key per slot.
        expect(modelCalls(i === 0 ? 'fleet beat one' : 'fleet beat two'), id).toBe(slots.length);
        const keys = (
          await store
            .collection<IdempotencyRecord>(IDEMPOTENCY_COLLECTION, { ttlField: 'expires_at' })
            .find({ where: { agent_id: agent } })
        )
          .map((v) => v.doc)
          .filter((r) => r.key.startsWith(`cron:${id}:`));
        expect(
          keys.map((r) => Date.parse(r.key.slice(`cron:${id}:`.length))).sort((x, y) => x - y),
          id,
        ).toEqual(slots);
        expect(
          keys.every((r) => r.state === 'done'),
          id,
        ).toBe(true);
      }
      // The fire the victim died holding was finished by another scheduler, once.
      const finished = (await fireLog.get(held!.id))!.doc;
      expect(finished).toMatchObject({ outcome: 'fired', slot_at: held!.slot_at });
      expect(finished.taken_by).not.toBe(held!.taken_by);
      console.log(
        `fleet schedules: the killed scheduler's fire of ${held!.slot_at} was finished by ${finished.taken_by} (${finished.reason ?? 'fired afresh'})`,
      );
      const [job] = (await call(A, 'GET', `/agents/${agent}/schedules`, { token })).body.schedules;
      expect(job).toMatchObject({ enabled: false, next_run: null, last_run: expect.any(String) });
    }, 240_000);
  },
);
