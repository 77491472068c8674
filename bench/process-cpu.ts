import { readdir, readFile } from 'node:fs/promises';
import type { BenchProcess } from './target.ts';

// CPU time of a target's processes over a measured window, from /proc (Linux): where the time
// of a run that is not bound by one request's latency goes (the schedule targets).

/** Linux's USER_HZ: /proc/<pid>/stat counts CPU time in these ticks (100 on every common build). */
const TICKS_PER_SEC = 100;

/** The fields of /proc/<pid>/stat after `(comm)` (which may itself hold a parenthesis): state is [0], ppid [1], utime [11], stime [12], cutime [13], cstime [14]. */
async function statFields(pid: number | string): Promise<string[]> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

const ticksToMs = (...ticks: string[]): number => (ticks.reduce((sum, t) => sum + Number(t), 0) * 1000) / TICKS_PER_SEC;

/** User + system CPU of the live children of `pid`, in ms (a child gone meanwhile counts 0). */
async function childrenMs(pid: number): Promise<number> {
  const parent = String(pid);
  const each = await Promise.all(
    (await readdir('/proc')).filter((name) => /^\d+$/.test(name)).map(async (name) => {
      try {
        const fields = await statFields(name);
        return fields[1] === parent ? ticksToMs(fields[11]!, fields[12]!) : 0;
      } catch {
        return 0;
      }
    }),
  );
  return each.reduce((sum, ms) => sum + ms, 0);
}

/**
 * CPU time (user + system) of each process so far, in ms; a process that is gone reads 0. With
 * `withChildren`, its children's too: the live ones' own and the reaped ones' (`cutime`, `cstime`).
 */
export async function cpuMs(processes: BenchProcess[]): Promise<Map<string, number>> {
  const read = async (p: BenchProcess): Promise<[string, number]> => {
    try {
      const fields = await statFields(p.pid);
      const own = ticksToMs(fields[11]!, fields[12]!);
      return [p.role, p.withChildren === true ? own + ticksToMs(fields[13]!, fields[14]!) + (await childrenMs(p.pid)) : own];
    } catch {
      return [p.role, 0];
    }
  };
  return new Map(await Promise.all(processes.map(read)));
}

/** CPU ms per fire of each process over the window, and the cores the processes used on average. */
export function cpuDetails(
  before: Map<string, number>,
  after: Map<string, number>,
  fires: number,
  secs: number,
) {
  const details: Record<string, number> = {};
  let total = 0;
  for (const [role, ms] of after) {
    const used = ms - (before.get(role) ?? 0);
    total += used;
    details[`cpu_ms_per_fire_${role}`] = Math.round((used / Math.max(1, fires)) * 100) / 100;
  }
  details.cpu_cores_used = Math.round((total / 1000 / secs) * 100) / 100;
  return details;
}

/**
 * CPU µs per request of each process over a measured window, and their sum: the number a change
 * to a hot path compares before and after (unlike a ratio of throughputs it does not move with the
 * load generator's share of the machine). Null where nothing was requested or a process was gone.
 */
export function cpuPerRequest(
  before: Map<string, number>,
  after: Map<string, number>,
  requests: number,
): { total: number | null; byRole: Map<string, number | null> } {
  const byRole = new Map<string, number | null>();
  for (const [role, ms] of after) {
    const start = before.get(role) ?? 0;
    byRole.set(role, requests > 0 && ms > 0 && start > 0 ? ((ms - start) * 1000) / requests : null);
  }
  const each = [...byRole.values()];
  const total = each.length === 0 || each.includes(null) ? null : each.reduce<number>((sum, us) => sum + us!, 0);
  return { total, byRole };
}
