import type { PlatformConfig, RetentionStatus, SweepReport } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import type { AuditArchive } from '../audit/audit-archive.ts';
import type { StoredAuditEntry } from '../audit/audit-chain.ts';
import type { AuditTrail } from '../audit/audit-entry.ts';
import { transcriptsCollection } from '../agents/create-session-store.ts';
import { Errors } from '../errors/errors.ts';
import { usageEventsLog } from '../invocation/usage-events.ts';
import type { LicenceState } from '../licence/licence.ts';
import type { Clock } from '../time/clock.ts';
import { workflowRuns } from '../workflows/run-record.ts';
import { buildHoldSet, type HoldSet } from './hold-set.ts';
import { createLegalHolds, type LegalHolds } from './legal-holds.ts';
import {
  LostSweepLockError,
  RETENTION_CLASSES,
  startResult,
  type ClassSweep,
  type RetentionClass,
  type SweepContext,
} from './sweep-context.ts';
import {
  PENDING_SEGMENT_ID,
  RETENTION_STATE_COLLECTION,
  sweepAudit,
  type PendingSegment,
} from './sweep-audit.ts';
import { createSweepLock, type SweepClaim } from './sweep-lock.ts';
import { sweepRuns } from './sweep-runs.ts';
import { sweepTranscripts } from './sweep-transcripts.ts';
import { sweepUsage } from './sweep-usage.ts';

export type RetentionSettings = PlatformConfig['retention'];

const LAST_SWEEP_ID = 'last-sweep';

export interface RetentionServiceDeps {
  store: Store;
  clock: Clock;
  /** `[retention]`, read at every sweep (a config reload applies to the next one). */
  settings: () => RetentionSettings;
  /** `[audit] enabled`: with audit off there is nothing to archive. */
  auditEnabled: boolean;
  /** The archive in the checkpoint sink; null without a sink (audit retention is then refused at boot). */
  archive: AuditArchive | null;
  /** Writes a checkpoint of the chain now (AuditCheckpoints.write). */
  writeCheckpoint: () => Promise<unknown>;
  audit: Pick<AuditTrail, 'record'>;
  /** The licence held now: usage events of its period are never removed. */
  licence: () => LicenceState;
  /** This process, as the lock and the report name it (e.g. `api@host:pid`). */
  node: string;
  log: {
    info(context: Record<string, unknown>, message: string): void;
    warn(context: Record<string, unknown>, message: string): void;
    debug(context: Record<string, unknown>, message: string): void;
  };
}

/**
 * Retention of the four data classes with legal holds (docs/retention.md). Every process with the
 * api runs the scheduler that calls `sweepIfDue`; the store lock lets one of them sweep each
 * `sweep_interval_secs` period, and takes over a sweep whose process died once its lease lapses.
 */
export interface RetentionService {
  readonly holds: LegalHolds;
  /** The scheduled sweep: null when the period was already swept, another process is sweeping, or nothing is configured. */
  sweepIfDue(): Promise<SweepReport | null>;
  /** A sweep now (POST /retention/sweep); 409 while another process sweeps. */
  sweepNow(caller: { identity: string; role: string }): Promise<SweepReport>;
  status(): Promise<RetentionStatus>;
}

/** The lease of a sweep: renewed at every step, so it only runs out when the process stalls or dies. */
export function sweepLeaseMs(intervalSecs: number): number {
  return Math.min(300, Math.max(10, intervalSecs)) * 1000;
}

export function createRetentionService(deps: RetentionServiceDeps): RetentionService {
  const lock = createSweepLock({
    store: deps.store,
    now: () => deps.clock.now(),
    node: deps.node,
    leaseMs: () => sweepLeaseMs(deps.settings().sweep_interval_secs),
  });
  const holds = createLegalHolds({
    store: deps.store,
    clock: deps.clock,
    audit: deps.audit,
    settings: deps.settings,
    fence: () => lock.fenceHolds(sweepLeaseMs(deps.settings().sweep_interval_secs)),
  });
  const state = deps.store.collection<{ id: string; report: SweepReport }>(RETENTION_STATE_COLLECTION);
  const runs = workflowRuns(deps.store);

  async function readHolds(): Promise<{ set: HoldSet; config: string }> {
    const config = configHolds();
    const set = await buildHoldSet({
      holds: await holds.list(),
      runsWithKey: async (keys) =>
        (await Promise.all(keys.map((k) => runs.find({ where: { business_key: k } }))))
          .flat()
          .map(({ doc }) => doc.id),
    });
    return { set, config };
  }

  /** The config's holds, to notice a reload during a sweep. */
  function configHolds(): string {
    const { hold_agents, hold_business_keys } = deps.settings();
    return JSON.stringify([hold_agents, hold_business_keys]);
  }

  async function sweep(
    trigger: SweepReport['trigger'],
    period: number | null,
    claim: SweepClaim,
    caller: { identity: string; role: string },
  ): Promise<SweepReport> {
    const settings = deps.settings();
    const now = deps.clock.now();
    const { token } = claim;
    // Read after the claim, so they include every hold of the epoch the claim saw.
    let read = { ...(await readHolds()), epoch: claim.holdEpoch };
    const lostLock = async (): Promise<never> => {
      throw new LostSweepLockError(await lock.holder());
    };
    const ctx: SweepContext = {
      now,
      get holds() {
        return read.set;
      },
      batchSize: settings.batch_size,
      stillHolder: async () => {
        if (!(await lock.renew(token))) await lostLock();
      },
      deleteBatch: async (batch) => {
        const epoch = await lock.beginDeletes(token);
        if (epoch === null) return lostLock();
        try {
          if (epoch !== read.epoch || configHolds() !== read.config) read = { ...(await readHolds()), epoch };
          return await batch(read.set);
        } finally {
          await lock.endDeletes(token);
        }
      },
      log: (context, message) => deps.log.info(context, message),
      progress: (context, message) => deps.log.debug(context, message),
    };
    const classes = {} as Record<RetentionClass, ClassSweep>;
    let lost: LostSweepLockError | null = null;
    for (const name of RETENTION_CLASSES) {
      const { result, cutoff } = startResult(settings[`${name}_days`], now);
      classes[name] = result;
      if (name === 'audit' && !deps.auditEnabled) {
        classes.audit = { ...result, status: 'disabled', cutoff: null };
        continue;
      }
      if (cutoff === null || lost !== null) continue;
      try {
        await sweepClass(name, ctx, cutoff, result, settings);
      } catch (error) {
        if (error instanceof LostSweepLockError) lost = error;
        result.status = 'failed';
        result.error = (error as Error).message;
        deps.log.warn(
          { class: name, reason: result.error },
          'retention: sweep of a class failed; what was done is kept, the next sweep retries',
        );
      }
      if (result.status === 'done')
        deps.log.info(
          { class: name, deleted: result.deleted, held: result.held, cutoff },
          'retention: class swept',
        );
    }
    const report: SweepReport = {
      trigger,
      period,
      node: deps.node,
      started_at: now.toISOString(),
      finished_at: deps.clock.now().toISOString(),
      status: RETENTION_CLASSES.some((c) => classes[c].status === 'failed') ? 'partial' : 'completed',
      classes,
    };
    if (lost === null) {
      await state.upsert({ id: LAST_SWEEP_ID, report });
      await auditSweep(report, caller);
    }
    return report;
  }

  async function sweepClass(
    name: RetentionClass,
    ctx: SweepContext,
    cutoff: string,
    result: ClassSweep,
    settings: RetentionSettings,
  ): Promise<void> {
    switch (name) {
      case 'audit':
        if (deps.archive === null)
          throw new Error(
            'audit retention needs [audit.checkpoints] sink (or [audit.checkpoints.s3]) to archive to; nothing archived or deleted',
          );
        return sweepAudit(
          {
            store: deps.store,
            archive: deps.archive,
            writeCheckpoint: deps.writeCheckpoint,
            segmentEntries: settings.audit_segment_entries,
          },
          ctx,
          cutoff,
          result,
        );
      case 'usage': {
        const licence = deps.licence();
        return sweepUsage(
          deps.store,
          ctx,
          cutoff,
          licence.kind === 'loaded' ? new Date(licence.licence.period_start).toISOString() : null,
          result,
        );
      }
      case 'transcripts':
        return sweepTranscripts(deps.store, ctx, cutoff, result);
      case 'runs':
        return sweepRuns(deps.store, ctx, cutoff, result);
    }
  }

  /** One entry per sweep: counts and outcome, never contents. */
  async function auditSweep(report: SweepReport, caller: { identity: string; role: string }): Promise<void> {
    const metadata: Record<string, unknown> = {
      trigger: report.trigger,
      period: report.period,
      node: report.node,
      status: report.status,
    };
    for (const name of RETENTION_CLASSES) {
      const c = report.classes[name];
      metadata[name] = {
        status: c.status,
        deleted: c.deleted,
        held: c.held,
        ...(c.archived_segments === undefined
          ? {}
          : {
              archived_segments: c.archived_segments,
              archived_to_seq: c.archived_to_seq,
              held_from_seq: c.held_from_seq,
            }),
        ...(c.error === undefined ? {} : { error: c.error }),
      };
    }
    await deps.audit
      .record({
        category: 'retention',
        identity: caller.identity,
        role: caller.role,
        action: 'retention.sweep',
        target: report.node,
        result: report.status,
        metadata,
      })
      .catch((err: unknown) =>
        deps.log.warn({ err }, 'retention: the audit entry of the sweep could not be written'),
      );
  }

  function anythingToSweep(settings: RetentionSettings): boolean {
    return RETENTION_CLASSES.some((c) => settings[`${c}_days`] > 0);
  }

  const system = { identity: 'system', role: 'admin' };

  return {
    holds,

    async sweepIfDue() {
      const settings = deps.settings();
      if (!anythingToSweep(settings)) return null;
      const period = Math.floor(deps.clock.now().getTime() / (settings.sweep_interval_secs * 1000));
      const claim = await lock.claim(period);
      if (claim === null) return null;
      if (claim.tookOverFrom !== null)
        deps.log.warn(
          { previous: claim.tookOverFrom, period },
          'retention: taking over a sweep whose process stopped renewing its lease',
        );
      let report: SweepReport | null = null;
      try {
        report = await sweep('schedule', period, claim, system);
        return report;
      } finally {
        // A sweep that lost its lock leaves the period to the process that took it over.
        if (report !== null) await lock.release(claim.token, period).catch(() => undefined);
      }
    },

    async sweepNow(caller) {
      const claim = await lock.claim(null);
      if (claim === null)
        throw Errors.conflict(
          `a retention sweep is running on ${(await lock.holder()) ?? 'another process'}; try again when it has finished`,
        );
      let report: SweepReport | null = null;
      try {
        report = await sweep('manual', null, claim, caller);
        return report;
      } finally {
        if (report !== null) await lock.release(claim.token, null).catch(() => undefined);
      }
    },

    status: () => readStatus(),
  };

  async function readStatus(): Promise<RetentionStatus> {
    const settings = deps.settings();
    const audit = deps.store.log<StoredAuditEntry>('audit', {
      indexes: ['category', 'identity', 'timestamp'],
    });
    const [firstAudit] = await audit.scan(1, 1);
    const [firstUsage] = await usageEventsLog(deps.store).scan(1, 1);
    const [oldestTranscript] = await transcriptsCollection(deps.store).find({
      orderBy: { field: 'oldest_turn_at', direction: 'asc' },
      limit: 1,
    });
    const terminalRuns = await Promise.all(
      (['Completed', 'Failed', 'Escalated'] as const).map((s) =>
        runs.find({ where: { state: s }, orderBy: { field: 'completed_at', direction: 'asc' }, limit: 1 }),
      ),
    );
    const oldestRun =
      terminalRuns
        .flat()
        .map(({ doc }) => doc.completed_at)
        .filter((t): t is string => t !== null)
        .sort()[0] ?? null;
    const pending =
      (await deps.store.collection<PendingSegment>(RETENTION_STATE_COLLECTION).get(PENDING_SEGMENT_ID))
        ?.doc ?? null;
    const last = (await state.get(LAST_SWEEP_ID))?.doc.report ?? null;
    const archive: RetentionStatus['classes']['audit']['archive'] = {
      sink: deps.archive?.describe ?? null,
      segments: 0,
      from_seq: null,
      to_seq: null,
    };
    if (deps.archive !== null) {
      const read = await deps.archive.state();
      if (read.status === 'failed') archive.error = read.reason;
      if (read.status === 'ok')
        Object.assign(archive, {
          segments: read.manifest.segments.length,
          from_seq: 1,
          to_seq: read.last.to_seq,
        });
    }
    const transcriptDoc = oldestTranscript?.doc;
    return {
      sweep_interval_secs: settings.sweep_interval_secs,
      classes: {
        audit: {
          retention_days: settings.audit_days,
          oldest_kept: firstAudit === undefined ? null : String(firstAudit.timestamp),
          live_from_seq: firstAudit?.seq ?? null,
          archive,
          pending_segment: pending === null ? null : { from_seq: pending.from_seq, to_seq: pending.to_seq },
        },
        usage: { retention_days: settings.usage_days, oldest_kept: firstUsage?.at ?? null },
        transcripts: {
          retention_days: settings.transcripts_days,
          oldest_kept:
            transcriptDoc === undefined
              ? null
              : (transcriptDoc.oldest_turn_at ?? transcriptDoc.turns[0]?.at ?? null),
        },
        runs: { retention_days: settings.runs_days, oldest_kept: oldestRun },
      },
      holds: await holds.list(),
      last_sweep: last,
    };
  }
}
