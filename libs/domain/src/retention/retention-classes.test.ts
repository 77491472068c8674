import { afterEach, describe, expect, it } from 'vitest';
import { transcriptsCollection } from '../agents/create-session-store.ts';
import { SESSION_CONTENTS_COLLECTION } from '../agents/session-contents.ts';
import { createTranscriptStore } from '../agents/transcript-store.ts';
import { usageEventsLog } from '../invocation/usage-events.ts';
import { createUsageService } from '../invocation/usage-service.ts';
import type { Licence } from '../licence/licence.ts';
import { workflowRuns } from '../workflows/run-record.ts';
import {
  NOW,
  openRetentionHarness,
  putRun,
  putTranscript,
  recordUsage,
  usageEvent,
  type RetentionHarness,
} from './testing/retention-harness.ts';

// Usage, transcripts and runs: what a sweep removes, what it keeps, and what legal holds keep
// across several sweeps until they are lifted. A fixed clock stands in for the days passing.

const OLD = '2027-01-10T00:00:00.000Z';
const RECENT = '2027-05-25T00:00:00.000Z';
const HELD_AGENT = '7d3c9a2e-1f4b-4c8e-9a6d-2b5e8f0c1a3d';
const CLAIM = 'CLM-2026-000123';

let h: RetentionHarness;
afterEach(async () => h?.close());

async function sweep(): Promise<Awaited<ReturnType<RetentionHarness['retention']['sweepNow']>>> {
  return h.retention.sweepNow({ identity: 'tester', role: 'admin' });
}

async function placeHold(body: { agent_id?: string; business_key?: string }): Promise<string> {
  return (
    await h.retention.holds.add(
      { ...body, reason: 'litigation 2027-17' },
      { identity: 'counsel', role: 'auditor' },
    )
  ).id;
}

describe('usage retention', () => {
  it('removes old events and keeps recent ones; /usage/summary totals do not change', async () => {
    h = await openRetentionHarness({ usage_days: 30 });
    h.clock.set(NOW);
    await recordUsage(h.store, [usageEvent(OLD), usageEvent(OLD), usageEvent(RECENT), usageEvent(RECENT)]);
    const usage = createUsageService({ store: h.store, clock: h.clock, licence: () => h.licence });
    const before = await usage.summary();

    const report = await sweep();
    expect(report.classes.usage).toMatchObject({ status: 'done', deleted: 2, held: 0 });
    expect((await usageEventsLog(h.store).scan(1, 100)).map((e) => e.at)).toEqual([RECENT, RECENT]);
    expect(await usage.summary()).toEqual(before);
  });

  it('never removes an event of the current licence period, which GET /usage sums', async () => {
    h = await openRetentionHarness({ usage_days: 30 });
    h.clock.set(NOW);
    const periodStart = '2027-01-01T00:00:00.000Z';
    h.licence = {
      kind: 'loaded',
      licence: { period_start: periodStart, period_end: '2028-01-01T00:00:00.000Z' } as Licence,
    };
    await recordUsage(h.store, [usageEvent('2026-12-20T00:00:00.000Z'), usageEvent(OLD), usageEvent(RECENT)]);
    const usage = createUsageService({ store: h.store, clock: h.clock, licence: () => h.licence });
    const before = await usage.usage();

    const report = await sweep();
    expect(report.classes.usage).toMatchObject({ deleted: 1, cutoff: periodStart });
    expect((await usageEventsLog(h.store).scan(1, 100)).map((e) => e.at)).toEqual([OLD, RECENT]);
    expect(await usage.usage()).toEqual(before);
  });

  it('keeps the events of a held agent and of a held business key through several sweeps, until the hold is lifted', async () => {
    h = await openRetentionHarness({ usage_days: 30, batch_size: 10 });
    h.clock.set(NOW);
    await putRun(h.store, { id: 'run-claim', state: 'Running', completed_at: null, business_key: CLAIM });
    const events = Array.from({ length: 25 }, (_, i) =>
      usageEvent(
        OLD,
        i % 5 === 0
          ? { agent_id: HELD_AGENT }
          : i % 7 === 0
            ? { run_id: 'run-claim', workflow_type: 'claims_intake' }
            : {},
      ),
    );
    await recordUsage(h.store, [...events, usageEvent(RECENT)]);
    const agentHold = await placeHold({ agent_id: HELD_AGENT });
    const keyHold = await placeHold({ business_key: CLAIM });
    const held = (await usageEventsLog(h.store).scan(1, 100))
      .filter((e) => e.agent_id === HELD_AGENT || e.run_id === 'run-claim')
      .map((e) => e.seq);
    expect(held).toHaveLength(8);

    for (let i = 0; i < 3; i++) {
      const report = await sweep();
      expect(report.classes.usage.held).toBe(8);
      expect((await usageEventsLog(h.store).scan(1, 100)).map((e) => e.seq)).toEqual([...held, 26]);
      h.clock.advance(86_400_000);
    }

    await h.retention.holds.remove(agentHold, { identity: 'counsel', role: 'auditor' });
    expect((await sweep()).classes.usage).toMatchObject({ deleted: 5, held: 3 });
    await h.retention.holds.remove(keyHold, { identity: 'counsel', role: 'auditor' });
    expect((await sweep()).classes.usage).toMatchObject({ deleted: 3, held: 0 });
    expect((await usageEventsLog(h.store).scan(1, 100)).map((e) => e.seq)).toEqual([26]);
  });

  it('honours holds of [retention] hold_agents like those placed through the api', async () => {
    h = await openRetentionHarness({ usage_days: 30, hold_agents: [HELD_AGENT] });
    h.clock.set(NOW);
    await recordUsage(h.store, [
      usageEvent(OLD, { agent_id: HELD_AGENT }),
      usageEvent(OLD),
      usageEvent(RECENT),
    ]);
    expect((await sweep()).classes.usage).toMatchObject({ deleted: 1, held: 1 });
    expect((await h.retention.holds.list())[0]).toMatchObject({
      id: `config:agent:${HELD_AGENT}`,
      source: 'config',
    });
  });
});

describe('transcript retention', () => {
  it('drops turns older than the period, deletes transcripts left empty, keeps recent ones', async () => {
    h = await openRetentionHarness({ transcripts_days: 30 });
    h.clock.set(NOW);
    await putTranscript(h.store, 't-old', 'agent-a', 'C1', [
      { content: 'hello', at: OLD },
      { content: 'hi', at: OLD },
    ]);
    await putTranscript(h.store, 't-mixed', 'agent-a', 'C2', [
      { content: 'old', at: OLD },
      { content: 'new', at: RECENT },
    ]);
    await putTranscript(h.store, 't-new', 'agent-a', 'C3', [{ content: 'new', at: RECENT }]);

    const report = await sweep();
    expect(report.classes.transcripts).toMatchObject({ status: 'done', deleted: 3, held: 0 });
    const coll = transcriptsCollection(h.store);
    expect(await coll.get('t-old')).toBeNull();
    expect((await coll.get('t-mixed'))?.doc).toMatchObject({
      turns: [{ content: 'new', at: RECENT }],
      oldest_turn_at: RECENT,
    });
    expect((await coll.get('t-new'))?.doc.turns).toHaveLength(1);
    expect((await h.retention.status()).classes.transcripts.oldest_kept).toBe(RECENT);
  });

  it('keeps the transcripts of a held agent, and those naming a held business key, until lifted', async () => {
    h = await openRetentionHarness({ transcripts_days: 30, batch_size: 10 });
    h.clock.set(NOW);
    await putTranscript(h.store, 't-agent', HELD_AGENT, 'C1', [{ content: 'x', at: OLD }]);
    await putTranscript(h.store, 't-mention', 'agent-a', 'C2', [
      { content: `about claim ${CLAIM} please`, at: OLD },
    ]);
    await putTranscript(h.store, 't-conversation', 'agent-a', CLAIM, [{ content: 'y', at: OLD }]);
    for (let i = 0; i < 12; i++)
      await putTranscript(h.store, `t-other-${i}`, 'agent-a', `O${i}`, [{ content: 'z', at: OLD }]);
    const agentHold = await placeHold({ agent_id: HELD_AGENT });
    const keyHold = await placeHold({ business_key: CLAIM });

    for (let i = 0; i < 3; i++) {
      const report = await sweep();
      expect(report.classes.transcripts.held).toBe(3);
      const left = (await transcriptsCollection(h.store).find()).map(({ doc }) => doc.id).sort();
      expect(left).toEqual(['t-agent', 't-conversation', 't-mention']);
      h.clock.advance(86_400_000);
    }
    await h.retention.holds.remove(keyHold, { identity: 'counsel', role: 'auditor' });
    expect((await sweep()).classes.transcripts).toMatchObject({ deleted: 2, held: 1 });
    await h.retention.holds.remove(agentHold, { identity: 'counsel', role: 'auditor' });
    expect((await sweep()).classes.transcripts).toMatchObject({ deleted: 1, held: 0 });
    expect(await transcriptsCollection(h.store).count()).toBe(0);
  });
});

describe('transcript retention, long turns (kept apart: docs/agents.md "Sessions")', () => {
  const long = (text: string): string => `${text} ${'the water came through the ceiling. '.repeat(80)}`;
  const contents = () => h.store.collection<{ id: string; transcript?: string; content: string }>(SESSION_CONTENTS_COLLECTION);
  const chat = (conversation: string) => ({ agent_id: 'agent-a', channel_id: 'chan-1', conversation });

  it('deletes the contents of the turns it drops, and keeps a transcript whose long turn names a held business key', async () => {
    h = await openRetentionHarness({ transcripts_days: 30 });
    h.clock.set(NOW);
    const transcripts = createTranscriptStore(h.store, h.clock);
    const turn = (content: string, at: string) => ({ role: 'user' as const, content, at });
    await transcripts.append(chat('C-old'), 'm1', [turn(long('old'), OLD)]);
    await transcripts.append(chat('C-mixed'), 'm2', [turn(long('old'), OLD)]);
    await transcripts.append(chat('C-mixed'), 'm3', [turn(long('recent'), RECENT)]);
    await transcripts.append(chat('C-held'), 'm4', [turn(long(`about claim ${CLAIM}`), OLD)]);
    expect(await contents().count()).toBe(4);
    const hold = await placeHold({ business_key: CLAIM });

    expect((await sweep()).classes.transcripts).toMatchObject({ deleted: 2, held: 1 });
    const left = (await contents().find()).map(({ doc }) => doc.content.split(' ').slice(0, 3).join(' ')).sort();
    expect(left).toEqual([`about claim ${CLAIM}`, 'recent the water']);
    expect((await transcripts.get('agent-a', 'chan-1', 'C-mixed'))?.map((t) => t.content)).toEqual([long('recent')]);
    expect((await transcripts.get('agent-a', 'chan-1', 'C-held'))?.map((t) => t.content)).toEqual([long(`about claim ${CLAIM}`)]);

    await h.retention.holds.remove(hold, { identity: 'counsel', role: 'auditor' });
    expect((await sweep()).classes.transcripts).toMatchObject({ deleted: 1, held: 0 });
    expect((await contents().find()).map(({ doc }) => doc.content.split(' ')[0])).toEqual(['recent']);
  });
});

describe('run retention', () => {
  it('removes old terminal runs only: never Running or Suspended ones, nor runs whose bookkeeping is pending', async () => {
    h = await openRetentionHarness({ runs_days: 30 });
    h.clock.set(NOW);
    await putRun(h.store, { id: 'done-old', state: 'Completed', completed_at: OLD });
    await putRun(h.store, { id: 'failed-old', state: 'Failed', completed_at: OLD });
    await putRun(h.store, { id: 'escalated-old', state: 'Escalated', completed_at: OLD });
    await putRun(h.store, { id: 'done-recent', state: 'Completed', completed_at: RECENT });
    await putRun(h.store, { id: 'running-old', state: 'Running', completed_at: null, started_at: OLD });
    await putRun(h.store, { id: 'suspended-old', state: 'Suspended', completed_at: null, started_at: OLD });
    await putRun(h.store, { id: 'unfinalized-old', state: 'Completed', completed_at: OLD, finalized: false });

    const report = await sweep();
    expect(report.classes.runs).toMatchObject({ status: 'done', deleted: 3, held: 0 });
    const left = (await workflowRuns(h.store).find()).map(({ doc }) => doc.id).sort();
    expect(left).toEqual(['done-recent', 'running-old', 'suspended-old', 'unfinalized-old']);
  });

  it('keeps runs of a held agent, and runs carrying a held business key (field or input), until lifted', async () => {
    h = await openRetentionHarness({ runs_days: 30, batch_size: 10 });
    h.clock.set(NOW);
    const agentStep = [
      {
        step_name: 's',
        agent_id: HELD_AGENT,
        agent_name: 'held',
        output: '',
        tokens_used: 0,
        duration_ms: 0,
      },
    ];
    await putRun(h.store, { id: 'by-agent', state: 'Completed', completed_at: OLD, step_results: agentStep });
    await putRun(h.store, { id: 'by-key', state: 'Failed', completed_at: OLD, business_key: CLAIM });
    await putRun(h.store, {
      id: 'by-input',
      state: 'Completed',
      completed_at: OLD,
      input: `FNOL for ${CLAIM}: water damage`,
    });
    for (let i = 0; i < 15; i++)
      await putRun(h.store, { id: `other-${i}`, state: 'Completed', completed_at: OLD });
    const agentHold = await placeHold({ agent_id: HELD_AGENT });
    const keyHold = await placeHold({ business_key: CLAIM });

    for (let i = 0; i < 3; i++) {
      expect((await sweep()).classes.runs.held).toBe(3);
      expect((await workflowRuns(h.store).find()).map(({ doc }) => doc.id).sort()).toEqual([
        'by-agent',
        'by-input',
        'by-key',
      ]);
      h.clock.advance(86_400_000);
    }
    await h.retention.holds.remove(agentHold, { identity: 'counsel', role: 'auditor' });
    expect((await sweep()).classes.runs).toMatchObject({ deleted: 1, held: 2 });
    await h.retention.holds.remove(keyHold, { identity: 'counsel', role: 'auditor' });
    expect((await sweep()).classes.runs).toMatchObject({ deleted: 2, held: 0 });
  });
});

describe('the sweep itself', () => {
  it('deletes nothing by default (every period 0) and says so', async () => {
    h = await openRetentionHarness();
    h.clock.set(NOW);
    await recordUsage(h.store, [usageEvent(OLD)]);
    await putRun(h.store, { id: 'done-old', state: 'Completed', completed_at: OLD });
    expect(await h.retention.sweepIfDue()).toBeNull();
    const report = await sweep();
    for (const c of ['audit', 'usage', 'transcripts', 'runs'] as const)
      expect(report.classes[c]).toMatchObject({ status: 'kept_forever', deleted: 0 });
    expect(await usageEventsLog(h.store).count()).toBe(1);
    expect(await workflowRuns(h.store).count()).toBe(1);
  });

  it('records one audit entry per sweep with counts, never contents, and shows the last sweep in the status', async () => {
    h = await openRetentionHarness({ usage_days: 30 });
    h.clock.set(NOW);
    await recordUsage(h.store, [usageEvent(OLD, { model: 'secret-model-name' }), usageEvent(RECENT)]);
    const report = await sweep();
    const [entry] = await h.audit.query({ limit: 1, category: 'retention' });
    expect(entry).toMatchObject({
      action: 'retention.sweep',
      identity: 'tester',
      result: 'completed',
      metadata: { trigger: 'manual', usage: { status: 'done', deleted: 1, held: 0 } },
    });
    expect(JSON.stringify(entry)).not.toContain('secret-model-name');
    const status = await h.retention.status();
    expect(status.last_sweep).toEqual(report);
    expect(status.classes.usage).toEqual({ retention_days: 30, oldest_kept: RECENT });
  });

  it('sweeps once per period however many processes tick, and a second process takes over a sweep whose lease lapsed', async () => {
    h = await openRetentionHarness({ usage_days: 30, sweep_interval_secs: 60 });
    h.clock.set(NOW);
    await recordUsage(h.store, [usageEvent(OLD), usageEvent(RECENT)]);
    const other = await h.open('node-b');
    const tick = () =>
      Promise.all([
        h.retention.sweepIfDue(),
        other.retention.sweepIfDue(),
        h.retention.sweepIfDue(),
        other.retention.sweepIfDue(),
      ]);
    expect((await tick()).filter((r) => r !== null)).toHaveLength(1);
    h.clock.advance(30_000);
    expect((await tick()).filter((r) => r !== null)).toHaveLength(0);
    h.clock.advance(30_000);
    expect((await tick()).filter((r) => r !== null)).toHaveLength(1);
    expect(await h.audit.query({ limit: 10, category: 'retention' })).toHaveLength(2);

    // A process that claimed the next period and died: its lock lapses, another sweeps that period.
    const state = h.store.collection<{
      id: string;
      holder: string | null;
      token: string | null;
      until: string;
      period: number | null;
      done_period: number;
    }>('retention_state');
    h.clock.advance(60_000);
    const period = Math.floor(h.clock.now().getTime() / 60_000);
    await state.update('sweep-lock', (cur) => ({
      ...cur!.doc,
      holder: 'dead-node',
      token: 'gone',
      until: new Date(h.clock.now().getTime() + 10_000).toISOString(),
      period,
    }));
    expect((await tick()).filter((r) => r !== null)).toHaveLength(0);
    await expect(other.retention.sweepNow({ identity: 'x', role: 'admin' })).rejects.toMatchObject({
      category: 'Conflict',
    });
    h.clock.advance(11_000);
    const taken = (await tick()).filter((r) => r !== null);
    expect(taken).toHaveLength(1);
    expect(taken[0]).toMatchObject({ period, trigger: 'schedule' });
  });
});
