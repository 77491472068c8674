import { waitUntil } from '@agent-platform/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { transcriptsCollection } from '../agents/create-session-store.ts';
import { usageEventsLog } from '../invocation/usage-events.ts';
import { workflowRuns } from '../workflows/run-record.ts';
import {
  NOW,
  openRetentionHarness,
  putRun,
  putTranscript,
  recordAudit,
  recordUsage,
  usageEvent,
  type RetentionHarness,
} from './testing/retention-harness.ts';

// A legal hold placed while a sweep is running (issue 21 item 8): once POST /retention/holds has
// answered, nothing the hold covers may be deleted, even by the sweep already under way, in
// another process sharing the store (here: a second store connection and service on the file).

const KEY = 'CASE-RACE-1';
const RUNS = 3_000;
const EXPIRED_FROM = Date.parse('2027-01-10T00:00:00.000Z');
const caller = { identity: 'counsel', role: 'auditor' };

let h: RetentionHarness;
afterEach(async () => h?.close());

describe('a legal hold placed during a sweep', () => {
  it('keeps the run it covers: the sweep of 3,000 expired runs re-reads the holds before each batch', async () => {
    h = await openRetentionHarness({ runs_days: 30, batch_size: 50 });
    h.clock.set(NOW);
    const runs = workflowRuns(h.store);
    // The held run is the newest expired one: the sweep reaches it last.
    for (let i = 0; i < RUNS; i++)
      await putRun(h.store, {
        id: `run-${i}`,
        state: 'Completed',
        completed_at: new Date(EXPIRED_FROM + i * 1000).toISOString(),
      });
    await putRun(h.store, {
      id: 'run-held',
      state: 'Completed',
      completed_at: new Date(EXPIRED_FROM + RUNS * 1000).toISOString(),
      business_key: KEY,
    });
    const otherNode = await h.open('api-2');

    const sweeping = h.retention.sweepNow({ identity: 'ops', role: 'admin' });
    await waitUntil(async () => (await runs.count({ state: 'Completed' })) < RUNS - 100, {
      timeoutMs: 60_000,
      message: 'the sweep deleting runs',
    });
    await otherNode.retention.holds.add({ business_key: KEY, reason: 'litigation 2027-17' }, caller);
    const remaining = await runs.count({ state: 'Completed' });
    const report = await sweeping;

    expect(remaining).toBeGreaterThan(1); // the hold answered while the sweep still had runs to delete
    expect(await runs.get('run-held')).not.toBeNull();
    expect(report.classes.runs).toMatchObject({ status: 'done', deleted: RUNS, held: 1 });
  }, 120_000);

  it('keeps the transcript it covers', async () => {
    h = await openRetentionHarness({ transcripts_days: 30, batch_size: 50 });
    h.clock.set(NOW);
    const count = 1_500;
    for (let i = 0; i < count; i++)
      await putTranscript(h.store, `t-${i}`, 'agent-a', `conv-${i}`, [
        { content: 'hello', at: new Date(EXPIRED_FROM + i * 1000).toISOString() },
      ]);
    await putTranscript(h.store, 't-held', 'agent-a', KEY, [
      { content: 'about the case', at: new Date(EXPIRED_FROM + count * 1000).toISOString() },
    ]);
    const otherNode = await h.open('api-2');
    const transcripts = transcriptsCollection(h.store);

    const sweeping = h.retention.sweepNow({ identity: 'ops', role: 'admin' });
    await waitUntil(async () => (await transcripts.count()) < count - 100, {
      timeoutMs: 60_000,
      message: 'the sweep deleting transcripts',
    });
    await otherNode.retention.holds.add({ business_key: KEY, reason: 'litigation 2027-17' }, caller);
    const remaining = await transcripts.count();
    const report = await sweeping;

    expect(remaining).toBeGreaterThan(1);
    expect(await transcripts.get('t-held')).not.toBeNull();
    expect(report.classes.transcripts).toMatchObject({ status: 'done', deleted: count, held: 1 });
  }, 120_000);

  it('keeps the usage events it covers', async () => {
    h = await openRetentionHarness({ usage_days: 30, batch_size: 50 });
    h.clock.set(NOW);
    const count = 3_000;
    const agent = '7d3c9a2e-1f4b-4c8e-9a6d-2b5e8f0c1a3d';
    await recordUsage(
      h.store,
      Array.from({ length: count }, (_, i) =>
        usageEvent(
          new Date(EXPIRED_FROM + i * 1000).toISOString(),
          i === count - 10 ? { agent_id: agent } : {},
        ),
      ),
    );
    await recordUsage(h.store, [usageEvent(NOW)]);
    const otherNode = await h.open('api-2');
    const log = usageEventsLog(h.store);

    const sweeping = h.retention.sweepNow({ identity: 'ops', role: 'admin' });
    await waitUntil(async () => (await log.count()) < count - 100, {
      timeoutMs: 60_000,
      message: 'the sweep deleting events',
    });
    await otherNode.retention.holds.add({ agent_id: agent, reason: 'litigation 2027-17' }, caller);
    const remaining = await log.count();
    const report = await sweeping;

    expect(remaining).toBeGreaterThan(11);
    expect((await log.scan(1, 10)).map((e) => e.agent_id)).toEqual([agent, 'agent-a']);
    expect(report.classes.usage).toMatchObject({ status: 'done', deleted: count - 1, held: 1 });
  }, 120_000);

  it('keeps the audit entries it covers live when it is placed after their segment was archived', async () => {
    h = await openRetentionHarness({ audit_days: 30, audit_segment_entries: 100, batch_size: 10 });
    await recordAudit(h, 60);
    await recordAudit(h, 1, { target: `/claims/${KEY}` });
    await recordAudit(h, 60);
    h.clock.set(NOW);
    const otherNode = await h.open('api-2');
    // The hold is placed (on the other node) while the sweep writes the checkpoint that follows
    // the archiving of the first segment, [1, 100]: after the segment was chosen, before its
    // entries leave the live store.
    const put = h.sink.put.bind(h.sink);
    let placed = false;
    h.sink.put = async (name, bytes) => {
      if (!placed && name === 'latest.json' && h.sink.writes.some((w) => w.includes('segment'))) {
        placed = true;
        await otherNode.retention.holds.add({ business_key: KEY, reason: 'litigation 2027-17' }, caller);
      }
      return put(name, bytes);
    };

    const report = await h.retention.sweepNow({ identity: 'ops', role: 'admin' });

    expect(placed).toBe(true);
    expect(report.classes.audit).toMatchObject({ archived_to_seq: 100, held_from_seq: 61, deleted: 60 });
    const live = await h.store.log('audit').scan(1, 1);
    expect(live[0]?.seq).toBe(61);
    expect(await h.verify({ full: true })).toMatchObject({ valid: true });
  }, 60_000);
});
