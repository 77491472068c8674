import { generateKeyPairSync, sign, createHash, randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { RunState } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { transcriptsCollection } from '../../agents/create-session-store.ts';
import type { CheckpointSigner, CheckpointSink } from '../../audit/audit-checkpoint.ts';
import { createAuditCheckpoints, type AuditCheckpoints } from '../../audit/audit-checkpoints.ts';
import type { AuditTrail, VerifyReport } from '../../audit/audit-entry.ts';
import { createAuditTrail } from '../../audit/audit-trail.ts';
import { recordUsageEvent, type UsageEvent } from '../../invocation/usage-events.ts';
import type { LicenceState } from '../../licence/licence.ts';
import { fixedClock } from '../../time/clock.ts';
import { workflowRuns, type WorkflowRunRecord } from '../../workflows/run-record.ts';
import {
  createRetentionService,
  type RetentionService,
  type RetentionSettings,
} from '../retention-service.ts';

/** A sink on a directory (as `[audit.checkpoints] sink` is), with switches to make it fail. */
export interface TestSink extends CheckpointSink {
  readonly dir: string;
  /** Every put/write, in order (object names). */
  readonly writes: string[];
  /** When set, a put/write/read of a matching name throws it (a sink down, or a crash there). */
  fail: ((op: 'put' | 'read', name: string) => Error | null) | null;
}

export function directorySink(dir: string): TestSink {
  const path = (name: string) => join(dir, name);
  const sink: TestSink = {
    dir,
    writes: [],
    fail: null,
    describe: `dir:${dir}`,
    async put(name, bytes) {
      const error = sink.fail?.('put', name);
      if (error) throw error;
      await mkdir(dirname(path(name)), { recursive: true });
      const tmp = `${path(name)}.${randomUUID()}.tmp`;
      await writeFile(tmp, bytes);
      await rename(tmp, path(name));
      sink.writes.push(name);
    },
    async write(name, bytes) {
      await sink.put(name, bytes);
      await sink.put('latest.json', bytes);
    },
    async read(name) {
      const error = sink.fail?.('read', name);
      if (error) throw error;
      try {
        return await readFile(path(name));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw e;
      }
    },
    latest: () => sink.read('latest.json'),
    close: async () => undefined,
  };
  return sink;
}

export function testSigner(): CheckpointSigner {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(12);
  return {
    keyId: `sha256:${createHash('sha256').update(raw).digest('hex').slice(0, 32)}`,
    publicKey: `ed25519:${raw.toString('base64url')}`,
    publicKeyPem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
    sign: (bytes) => sign(null, bytes, privateKey).toString('base64url'),
  };
}

export const DEFAULT_RETENTION: RetentionSettings = {
  audit_days: 0,
  usage_days: 0,
  transcripts_days: 0,
  runs_days: 0,
  sweep_interval_secs: 3600,
  batch_size: 10,
  audit_segment_entries: 25,
  hold_agents: [],
  hold_business_keys: [],
};

export const NOW = '2027-06-01T12:00:00.000Z';
/** Far enough back to be expired by any period the tests use. */
export const LONG_AGO = '2025-01-01T00:00:00.000Z';

export interface RetentionHarness {
  dir: string;
  dbPath: string;
  store: Store;
  clock: ReturnType<typeof fixedClock>;
  sink: TestSink;
  signer: CheckpointSigner;
  checkpoints: AuditCheckpoints;
  audit: AuditTrail;
  retention: RetentionService;
  settings: RetentionSettings;
  licence: LicenceState;
  /** A second service on the same store (another process of a fleet), or after a restart. */
  open(
    node?: string,
  ): Promise<{ store: Store; retention: RetentionService; audit: AuditTrail; checkpoints: AuditCheckpoints }>;
  verify(options?: { full?: boolean }): Promise<VerifyReport>;
  close(): Promise<void>;
}

export async function openRetentionHarness(
  settings: Partial<RetentionSettings> = {},
): Promise<RetentionHarness> {
  const dir = await mkdtemp(join(tmpdir(), 'ap-retention-'));
  const dbPath = join(dir, 'platform.db');
  const clock = fixedClock(LONG_AGO);
  const sink = directorySink(join(dir, 'sink'));
  const signer = testSigner();
  const current: RetentionSettings = { ...DEFAULT_RETENTION, ...settings };
  const stores: Store[] = [];
  const logLines: string[] = [];
  const h = {} as RetentionHarness;

  async function open(node = 'test-node') {
    const store = await openEmbeddedStore({ path: dbPath, clock: () => clock.now() });
    stores.push(store);
    const checkpoints = createAuditCheckpoints({ store, clock, sink, signer, intervalSecs: () => 3600 });
    const audit = createAuditTrail({
      store,
      clock,
      enabled: true,
      checkpoints,
      archive: checkpoints.archive,
    });
    const retention = createRetentionService({
      store,
      clock,
      settings: () => current,
      auditEnabled: true,
      archive: checkpoints.archive,
      writeCheckpoint: () => checkpoints.write(),
      audit,
      licence: () => h.licence,
      node,
      log: {
        info: (_c, m) => logLines.push(m),
        warn: (_c, m) => logLines.push(`WARN ${m}`),
        debug: () => undefined,
      },
    });
    return { store, retention, audit, checkpoints };
  }

  const first = await open();
  Object.assign(h, {
    dir,
    dbPath,
    store: first.store,
    clock,
    sink,
    signer,
    checkpoints: first.checkpoints,
    audit: first.audit,
    retention: first.retention,
    settings: current,
    licence: { kind: 'none', reason: 'test' } as LicenceState,
    open,
    async verify(options = {}) {
      const report = await first.audit.verify(options);
      if (report.valid === null) throw new Error('audit disabled');
      return report;
    },
    async close() {
      for (const s of stores.splice(0)) await s.close().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  } satisfies Partial<RetentionHarness>);
  return h;
}

/** Appends `n` audit entries at the clock's time, one second apart; `over` may name an agent. */
export async function recordAudit(
  h: RetentionHarness,
  n: number,
  over: { target?: string; metadata?: Record<string, unknown> } = {},
): Promise<void> {
  for (let i = 0; i < n; i++) {
    await h.audit.record({
      category: 'request',
      identity: 'ops',
      role: 'admin',
      action: 'POST /x',
      target: over.target ?? `/x/${i}`,
      result: '200',
      metadata: over.metadata ?? { i },
    });
    h.clock.advance(1000);
  }
}

export function usageEvent(at: string, over: Partial<UsageEvent> = {}): UsageEvent {
  return {
    at,
    agent_id: 'agent-a',
    provider_id: 'fake',
    model: 'm',
    input_tokens: 10,
    output_tokens: 5,
    model_calls: 1,
    cost_usd: 0.001,
    workflow_type: null,
    value_class: null,
    source: 'Api',
    ...over,
  };
}

export async function recordUsage(store: Store, events: UsageEvent[]): Promise<void> {
  for (const e of events) await recordUsageEvent(store, e);
}

export async function putTranscript(
  store: Store,
  id: string,
  agentId: string,
  conversation: string,
  turns: { content: string; at: string }[],
): Promise<void> {
  const kept = turns.map((t, i) => ({
    role: i % 2 === 0 ? ('user' as const) : ('assistant' as const),
    ...t,
  }));
  await transcriptsCollection(store).upsert({
    id,
    agent_id: agentId,
    channel: 'chan-1',
    conversation,
    turns: kept,
    message_ids: [],
    updated_at: kept.at(-1)?.at ?? LONG_AGO,
    oldest_turn_at: kept[0]?.at ?? LONG_AGO,
  });
}

export async function putRun(
  store: Store,
  over: Partial<WorkflowRunRecord> & { id: string; state: RunState; completed_at: string | null },
): Promise<void> {
  const run: WorkflowRunRecord = {
    workflow_id: 'wf-1',
    workflow_name: 'claims',
    input: 'a claim',
    step_results: [
      { step_name: 's1', agent_id: 'agent-a', agent_name: 'a', output: 'ok', tokens_used: 1, duration_ms: 1 },
    ],
    output: 'ok',
    error: null,
    started_at: over.completed_at ?? LONG_AGO,
    definition: { version: '1.0.0', steps: [], variables: {} },
    progress: { cursor: 1, input: '', variables: {}, group: null },
    pending: {},
    check_at: null,
    transaction: null,
    workflow_type: 'claims_intake',
    started_by: 'tester',
    finalized: true,
    updated_at: over.completed_at ?? LONG_AGO,
    ...over,
  };
  await workflowRuns(store).insert(run);
}
