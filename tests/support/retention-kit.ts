import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import {
  createAuditTrail,
  fixedClock,
  RETENTION_STATE_COLLECTION,
  workflowRuns,
  type WorkflowRunRecord,
} from '@agent-platform/domain';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';

/**
 * Helpers of the retention e2e tests (retention-crash, fleet-retention): an audit trail made long
 * ago in a data dir before any platform starts, a gate that holds one S3 request so a process can
 * be killed while it waits, and readers of the shared store.
 */

/** Writes `n` audit entries a year before now into `<dataDir>/platform.db`, as a platform of last year would have. */
export async function seedOldAudit(dataDir: string, n: number): Promise<void> {
  const store = await openEmbeddedStore({ path: join(dataDir, 'platform.db') });
  try {
    const clock = fixedClock(new Date(Date.now() - 365 * 86_400_000));
    const audit = createAuditTrail({ store, clock, enabled: true });
    for (let i = 0; i < n; i++) {
      await audit.record({
        category: 'request',
        identity: 'ops',
        role: 'admin',
        action: 'PUT /vault/:key',
        target: `/vault/k${i}`,
        result: '200',
        metadata: { i },
      });
      clock.advance(1000);
    }
  } finally {
    await store.close();
  }
}

/**
 * Holds the first PUT of a fresh checkpoint (`checkpoints/...`) that follows a PUT of the archive
 * manifest: the moment a sweep has archived a segment (written, read back, verified) and has not
 * deleted anything yet. `held` resolves when that request arrives; the request is never answered.
 */
export function afterArchiveGate(): {
  gate: (req: IncomingMessage) => Promise<void>;
  held: Promise<void>;
  armed: boolean;
  disarm(): void;
} {
  let manifestSeen = false;
  let arrive: () => void = () => undefined;
  const state = {
    armed: true,
    held: new Promise<void>((resolve) => (arrive = resolve)),
    disarm() {
      state.armed = false;
    },
    async gate(req: IncomingMessage) {
      if (!state.armed || req.method !== 'PUT') return;
      if (req.url?.includes('/archive/manifest.json') === true) manifestSeen = true;
      else if (manifestSeen && req.url?.includes('/checkpoints/') === true) {
        state.armed = false;
        arrive();
        await new Promise<never>(() => undefined);
      }
    },
  };
  return state;
}

/** The first live audit seq and the tip's. */
export async function liveRange(
  store: Store,
): Promise<{ first: number | null; tip: number | null; count: number }> {
  const log = store.log<{ hash: string; category: string; identity: string; timestamp: string }>('audit', {
    indexes: ['category', 'identity', 'timestamp'],
  });
  const [first] = await log.scan(1, 1);
  return { first: first?.seq ?? null, tip: (await log.tip())?.seq ?? null, count: await log.count() };
}

/** The process holding the retention sweep lock now (`<name>@<host>:<pid>`), or null. */
export async function sweepHolder(store: Store): Promise<{ holder: string; pid: number } | null> {
  const lock = (
    await store
      .collection<{ id: string; holder: string | null; until: string }>(RETENTION_STATE_COLLECTION)
      .get('sweep-lock')
  )?.doc;
  if (lock === undefined || lock.holder === null || lock.until <= new Date().toISOString()) return null;
  return { holder: lock.holder, pid: Number(lock.holder.split(':').at(-1)) };
}

/** Writes a Completed, finalized run that ended a year ago (with a business key when given). */
export async function seedOldRun(dataDir: string, id: string, businessKey?: string): Promise<void> {
  await seedOldRuns(dataDir, [{ id, ...(businessKey === undefined ? {} : { businessKey }) }]);
}

/** Writes Completed, finalized runs that ended a year ago, one second apart in the order given. */
export async function seedOldRuns(
  dataDir: string,
  runs: Array<{ id: string; businessKey?: string }>,
): Promise<void> {
  const store = await openEmbeddedStore({ path: join(dataDir, 'platform.db') });
  const first = Date.now() - 365 * 86_400_000;
  try {
    for (const [i, { id, businessKey }] of runs.entries()) {
      const ended = new Date(first + i * 1000).toISOString();
      await workflowRuns(store).insert(oldRun(id, ended, businessKey));
    }
  } finally {
    await store.close();
  }
}

function oldRun(id: string, ended: string, businessKey: string | undefined): WorkflowRunRecord {
  return {
    id,
    workflow_id: '00000000-0000-4000-8000-00000000000f',
    workflow_name: 'claims-intake',
    input: 'first notice of loss',
    state: 'Completed',
    step_results: [],
    output: 'done',
    error: null,
    started_at: ended,
    completed_at: ended,
    definition: { version: '1.0.0', steps: [], variables: {} },
    progress: { cursor: 0, input: '', variables: {}, group: null },
    pending: {},
    check_at: null,
    transaction: null,
    workflow_type: 'claims_intake',
    started_by: 'seed',
    finalized: true,
    updated_at: ended,
    ...(businessKey === undefined ? {} : { business_key: businessKey }),
  };
}
