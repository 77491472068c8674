import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { connectNatsBus } from '@agent-platform/bus/nats';
import { Subjects, type AgentInvokeRequest } from '@agent-platform/contracts';
import {
  CRON_FIRES_COLLECTION,
  IDEMPOTENCY_COLLECTION,
  type FireRecord,
  type IdempotencyRecord,
} from '@agent-platform/domain';
import { startFleetFixture, type FleetFixture } from './fleet-fixture.ts';
import { cpuDetails, cpuMs } from './process-cpu.ts';
import {
  scheduleStats,
  toLoadResult,
  type Delivery,
  type ScheduledJob,
  type ScheduleWindow,
} from './schedule-stats.ts';
import type { LoadResult, LoadSettings, StartedTarget, StartOptions } from './target.ts';

// The schedule targets (issue 9 item 9): a fleet with its schedulers, SCHEDULES schedules firing
// every EVERY_SECS at the local echo model, and evidence of every fire gathered from three
// places: the bench's own subscription on `agents.invoke` (what the agent workers received), the
// workers' idempotency records `cron:<id>:<slot>` (what the agent ran) and the fire log (what the
// schedulers say). docs/performance.md "Schedules (issue 9)" explains the numbers.

export interface ScheduleFleetOptions {
  schedulers: number;
  schedules: number;
  /** A divisor of 60 when `spread`. */
  everySecs: number;
  /**
   * false: `every_secs` schedules, whose slots are the multiples of the period since the epoch, so
   * all of them fire at the same instant. true: 6-field cron expressions `<s>/<period> * * * * *`
   * with `s` = schedule index mod the period: the same number of fires, spread over the period.
   */
  spread: boolean;
  /** The fleet's store (bench/fleet-fixture.ts); default embedded. */
  store?: 'embedded' | 'postgres';
}

/** Both agent templates of examples/: the schedules are spread over them. */
const AGENT_TEMPLATES = ['claims-intake', 'policy-servicing'];
/** Schedule creations in flight at once (POST /agents/{id}/schedules). */
const CREATE_CONCURRENCY = 8;
/** The window starts at a slot at least this far ahead: its first slot is still to come when the CPU is read. */
const LEAD_MS = 1_000;
/**
 * After the window, how long a due slot may still arrive before it counts as missed. Beyond the
 * period itself: a slot that late overlaps the next one and says enough.
 */
const SETTLE_MS = 30_000;
/** Once every due slot arrived, how long a repeat of one may still come (counted as a duplicate). */
const DUPLICATE_GRACE_MS = 3_000;
/** CPU is read this long before the window's edges, so that the slot AT its end is not counted. */
const CPU_EDGE_MS = 50;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function call<T>(url: string, token: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

/** The agents the schedules go to: the fixture's claims-intake and the other example template, installed and activated. */
async function installAgents(fleet: FleetFixture): Promise<string[]> {
  const ids = [fleet.agentId];
  for (const name of AGENT_TEMPLATES.slice(1)) {
    const path = fileURLToPath(new URL(`../examples/${name}`, import.meta.url));
    const reply = await call<{ installed: Array<{ name: string; id?: string }> }>(
      fleet.urls[0]!,
      fleet.token,
      'POST',
      '/catalog/install',
      { path, activate: true },
    );
    const id = reply.installed.find((p) => p.name === name)?.id;
    if (id === undefined) throw new Error(`${name} was not installed as an agent: ${JSON.stringify(reply)}`);
    ids.push(id);
  }
  return ids;
}

/** The schedules, round-robin over the agents, each with its own prompt. */
async function createSchedules(
  fleet: FleetFixture,
  agentIds: string[],
  { schedules: count, everySecs, spread }: ScheduleFleetOptions,
): Promise<ScheduledJob[]> {
  const jobs = new Array<ScheduledJob>(count);
  let next = 0;
  const creator = async () => {
    for (let i = next++; i < count; i = next++) {
      const agent = agentIds[i % agentIds.length]!;
      const offsetSecs = spread ? i % everySecs : 0;
      const when = spread
        ? { expression: `${offsetSecs}/${everySecs} * * * * *` }
        : { every_secs: everySecs };
      const created = await call<{ id: string }>(
        fleet.urls[0]!,
        fleet.token,
        'POST',
        `/agents/${agent}/schedules`,
        { ...when, prompt: `bench schedule ${i}` },
      );
      jobs[i] = { id: created.id, offsetMs: offsetSecs * 1000 };
    }
  };
  await Promise.all(Array.from({ length: CREATE_CONCURRENCY }, creator));
  return jobs;
}

/**
 * A plain subscription on `agents.invoke` (no queue group): NATS hands it a copy of every
 * invocation request the schedulers send, beside the one worker of the queue group that runs it.
 * It never answers. Its clock is the bench's, on the same host as the schedulers.
 */
async function tapInvocations(natsUrl: string): Promise<{ deliveries: Delivery[]; close(): Promise<void> }> {
  const bus = await connectNatsBus({ servers: natsUrl, name: 'bench-schedule-tap' });
  const deliveries: Delivery[] = [];
  await bus.listen<AgentInvokeRequest>(Subjects.agentInvoke, (request) => {
    const at = Date.now();
    const cron =
      typeof request.source === 'object'
        ? (request.source.Cron as { schedule_id?: string; scheduled_at?: string } | undefined)
        : undefined;
    if (cron?.schedule_id !== undefined && cron.scheduled_at !== undefined)
      deliveries.push({ schedule_id: cron.schedule_id, slot_at: cron.scheduled_at, at });
  });
  return { deliveries, close: () => bus.close() };
}

/** The workers' idempotency records of cron fires and the fire log, read from the shared store. */
async function readStore(fleet: Pick<FleetFixture, 'openStore'>) {
  const store = await fleet.openStore();
  try {
    const keys = await store
      .collection<IdempotencyRecord>(IDEMPOTENCY_COLLECTION, { ttlField: 'expires_at' })
      .find({ where: { scope: 'system:scheduler' } });
    const runs = keys.flatMap(({ doc }) => {
      // `cron:<schedule id>:<slot>`; the slot itself contains colons.
      const match = /^cron:([^:]+):(.+)$/.exec(doc.key);
      return match === null
        ? []
        : [
            {
              schedule_id: match[1]!,
              slot_at: match[2]!,
              done: doc.state === 'done',
              claimed_at: Date.parse(doc.created_at),
            },
          ];
    });
    const fires = (
      await store.collection<FireRecord>(CRON_FIRES_COLLECTION, { ttlField: 'expires_at' }).find()
    ).map(({ doc }) => doc);
    return { runs, fires };
  } finally {
    await store.close();
  }
}

/**
 * One measured window: the slots of the next `durationSecs` starting at a slot boundary (so a
 * 3 s warm-up still holds one slot of every schedule), then up to SETTLE_MS for late slots, then
 * the evidence.
 */
async function measureWindow(
  fleet: FleetFixture,
  tap: { deliveries: Delivery[] },
  schedules: ScheduledJob[],
  options: ScheduleFleetOptions,
  settings: LoadSettings,
): Promise<LoadResult> {
  const everyMs = options.everySecs * 1000;
  const startMs = Math.ceil((Date.now() + LEAD_MS) / everyMs) * everyMs;
  const window: ScheduleWindow = {
    schedules,
    everyMs,
    startMs,
    endMs: startMs + settings.durationSecs * 1000,
  };
  const pending = () => scheduleStats(window, tap.deliveries, [], []).missed > 0;
  await sleep(window.startMs - CPU_EDGE_MS - Date.now());
  const cpuBefore = await cpuMs(fleet.processes);
  await sleep(window.endMs - CPU_EDGE_MS - Date.now());
  const cpuAfter = await cpuMs(fleet.processes);
  const deadline = window.endMs + SETTLE_MS;
  while (pending() && Date.now() < deadline) await sleep(250);
  await sleep(DUPLICATE_GRACE_MS);
  // The last fires' answers: wait until the agent ran what arrived (or the deadline).
  let evidence = await readStore(fleet);
  while (Date.now() < deadline + DUPLICATE_GRACE_MS) {
    const stats = scheduleStats(window, tap.deliveries, evidence.runs, evidence.fires);
    if (stats.ran >= stats.fired && stats.log.running === 0) break;
    await sleep(1_000);
    evidence = await readStore(fleet);
  }
  const stats = scheduleStats(window, tap.deliveries, evidence.runs, evidence.fires);
  return toLoadResult(stats, window, {
    schedules: schedules.length,
    spread: options.spread ? 1 : 0,
    schedulers: options.schedulers,
    every_secs: options.everySecs,
    window_secs: settings.durationSecs,
    load_1m_at_end: Math.round((loadavg()[0] ?? 0) * 100) / 100,
    ...cpuDetails(cpuBefore, cpuAfter, stats.fired, settings.durationSecs),
  });
}

/**
 * 1 api node + 1 agent worker + `schedulers` scheduler processes over NATS and Redis (BullMQ),
 * the embedded store shared through one data_dir, the `local` echo model; then the schedules.
 * They fire from their creation on: between two measured windows (warm-up, run) the fleet keeps
 * firing, as it would in service.
 */
export async function startScheduleFleet(
  options: ScheduleFleetOptions,
  { nodeFlags }: StartOptions,
): Promise<StartedTarget> {
  const fleet = await startFleetFixture({
    nodeFlags,
    apis: 1,
    workers: 1,
    schedulers: options.schedulers,
    model: { kind: 'local' },
    ...(options.store === undefined ? {} : { store: options.store }),
  });
  let tap: Awaited<ReturnType<typeof tapInvocations>> | undefined;
  try {
    tap = await tapInvocations(fleet.natsUrl);
    const agents = await installAgents(fleet);
    const schedules = await createSchedules(fleet, agents, options);
    const started = tap;
    return {
      urls: fleet.urls,
      processes: fleet.processes,
      // What the runner checks before measuring: the fire log of one schedule answers.
      request: {
        method: 'GET',
        path: `/schedules/${schedules[0]!.id}/fires?limit=1`,
        headers: { authorization: `Bearer ${fleet.token}` },
      },
      measure: (settings) => measureWindow(fleet, started, schedules, options, settings),
      async stop() {
        await started.close();
        await fleet.stop();
      },
    };
  } catch (error) {
    await tap?.close();
    await fleet.stop();
    throw error;
  }
}
