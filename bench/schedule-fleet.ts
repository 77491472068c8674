import { loadavg } from 'node:os';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectNatsBus } from '@agent-platform/bus/nats';
import { Subjects, type AgentInvokeRequest } from '@agent-platform/contracts';
import {
  CRON_FIRES_COLLECTION,
  IDEMPOTENCY_COLLECTION,
  type FireRecord,
  type IdempotencyRecord,
} from '@agent-platform/domain';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { startFleetFixture, type FleetFixture } from './fleet-fixture.ts';
import {
  scheduleStats,
  slotsIn,
  toLoadResult,
  type Delivery,
  type ScheduleWindow,
} from './schedule-stats.ts';
import type { BenchProcess, LoadResult, LoadSettings, StartedTarget, StartOptions } from './target.ts';

// The schedule targets (issue 9 item 9): a fleet with its schedulers, SCHEDULES schedules firing
// every EVERY_SECS at the local echo model, and evidence of every fire gathered from three
// places: the bench's own subscription on `agents.invoke` (what the agent workers received), the
// workers' idempotency records `cron:<id>:<slot>` (what the agent ran) and the fire log (what the
// schedulers say). docs/performance.md "Schedules (issue 9)" explains the numbers.

export interface ScheduleFleetOptions {
  schedulers: number;
  schedules: number;
  everySecs: number;
}

/** Both agent templates of examples/: the schedules are spread over them. */
const AGENT_TEMPLATES = ['claims-intake', 'policy-servicing'];
/** Schedule creations in flight at once (POST /agents/{id}/schedules). */
const CREATE_CONCURRENCY = 8;
/** The window starts at a slot at least this far ahead, so that no creation races its first slot. */
const LEAD_MS = 1_000;
/**
 * After the window, how long a due slot may still arrive before it counts as missed. Beyond the
 * period itself: a slot that late overlaps the next one and says enough.
 */
const SETTLE_MS = 30_000;
/** Once every due slot arrived, how long a repeat of one may still come (counted as a duplicate). */
const DUPLICATE_GRACE_MS = 3_000;

/** Linux's USER_HZ: /proc/<pid>/stat counts CPU time in these ticks (100 on every common build). */
const TICKS_PER_SEC = 100;
/** CPU is read this long before the window's edges, so that the slot AT its end is not counted. */
const CPU_EDGE_MS = 50;

/** CPU time (user + system) of each process so far, in ms; a process that is gone reads 0. */
async function cpuMs(processes: BenchProcess[]): Promise<Map<string, number>> {
  const read = async (p: BenchProcess): Promise<[string, number]> => {
    try {
      // Fields after the `(comm)`: state is the 1st, utime the 12th, stime the 13th.
      const fields = (await readFile(`/proc/${p.pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
      return [p.role, ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SEC];
    } catch {
      return [p.role, 0];
    }
  };
  return new Map(await Promise.all(processes.map(read)));
}

/** CPU ms per fire of each process over the window, and the cores the fleet used on average. */
function cpuDetails(before: Map<string, number>, after: Map<string, number>, fired: number, secs: number) {
  const details: Record<string, number> = {};
  let total = 0;
  for (const [role, ms] of after) {
    const used = ms - (before.get(role) ?? 0);
    total += used;
    details[`cpu_ms_per_fire_${role}`] = Math.round((used / Math.max(1, fired)) * 100) / 100;
  }
  details.cpu_cores_used = Math.round((total / 1000 / secs) * 100) / 100;
  return details;
}

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

/** `count` `every` schedules, round-robin over the agents, each with its own prompt. */
async function createSchedules(
  fleet: FleetFixture,
  agentIds: string[],
  count: number,
  everySecs: number,
): Promise<string[]> {
  const ids: string[] = new Array<string>(count);
  let next = 0;
  const creator = async () => {
    for (let i = next++; i < count; i = next++) {
      const agent = agentIds[i % agentIds.length]!;
      const created = await call<{ id: string }>(
        fleet.urls[0]!,
        fleet.token,
        'POST',
        `/agents/${agent}/schedules`,
        {
          every_secs: everySecs,
          prompt: `bench schedule ${i}`,
        },
      );
      ids[i] = created.id;
    }
  };
  await Promise.all(Array.from({ length: CREATE_CONCURRENCY }, creator));
  return ids;
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
async function readStore(dataDir: string) {
  const store = await openEmbeddedStore({ path: join(dataDir, 'platform.db') });
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
  scheduleIds: string[],
  options: ScheduleFleetOptions,
  settings: LoadSettings,
): Promise<LoadResult> {
  const everyMs = options.everySecs * 1000;
  const startMs = Math.ceil((Date.now() + LEAD_MS) / everyMs) * everyMs;
  const window: ScheduleWindow = {
    scheduleIds,
    everyMs,
    startMs,
    endMs: startMs + settings.durationSecs * 1000,
  };
  const due = scheduleIds.length * slotsIn(window).length;
  const arrived = () =>
    new Set(
      tap.deliveries
        .filter((d) => Date.parse(d.slot_at) >= window.startMs && Date.parse(d.slot_at) < window.endMs)
        .map((d) => `${d.schedule_id}@${d.slot_at}`),
    ).size;
  await sleep(window.startMs - CPU_EDGE_MS - Date.now());
  const cpuBefore = await cpuMs(fleet.processes);
  await sleep(window.endMs - CPU_EDGE_MS - Date.now());
  const cpuAfter = await cpuMs(fleet.processes);
  const deadline = window.endMs + SETTLE_MS;
  while (arrived() < due && Date.now() < deadline) await sleep(250);
  await sleep(DUPLICATE_GRACE_MS);
  // The last fires' answers: wait until the agent ran what arrived (or the deadline).
  let evidence = await readStore(fleet.dataDir);
  while (Date.now() < deadline + DUPLICATE_GRACE_MS) {
    const stats = scheduleStats(window, tap.deliveries, evidence.runs, evidence.fires);
    if (stats.ran >= stats.fired && stats.log.running === 0) break;
    await sleep(1_000);
    evidence = await readStore(fleet.dataDir);
  }
  const stats = scheduleStats(window, tap.deliveries, evidence.runs, evidence.fires);
  return toLoadResult(stats, window, {
    schedules: scheduleIds.length,
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
  });
  let tap: Awaited<ReturnType<typeof tapInvocations>> | undefined;
  try {
    tap = await tapInvocations(fleet.natsUrl);
    const agents = await installAgents(fleet);
    const scheduleIds = await createSchedules(fleet, agents, options.schedules, options.everySecs);
    const started = tap;
    return {
      urls: fleet.urls,
      processes: fleet.processes,
      // What the runner checks before measuring: the fire log of one schedule answers.
      request: {
        method: 'GET',
        path: `/schedules/${scheduleIds[0]}/fires?limit=1`,
        headers: { authorization: `Bearer ${fleet.token}` },
      },
      measure: (settings) => measureWindow(fleet, started, scheduleIds, options, settings),
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
