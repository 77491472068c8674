import { readdirSync, readFileSync } from 'node:fs';

/** Whether a process with that pid exists (signal 0 checks without signalling). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether `pid` is a process that still runs: a zombie (exited, waiting for its parent to reap
 * it) does not, and holds no memory any more, though `processAlive` still finds it. Linux, /proc.
 */
export function processRunning(pid: number): boolean {
  const state = statOf(pid)?.state;
  return state !== undefined && state !== 'Z' && state !== 'X';
}

/** Every process whose parent, or parent's parent and so on, is `root` (Linux, /proc). */
export function descendantsOf(root: number): number[] {
  const table: { pid: number; ppid: number }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = statOf(Number(entry));
    if (stat) table.push({ pid: Number(entry), ppid: stat.ppid });
  }
  const found: number[] = [];
  const walk = (parent: number): void => {
    for (const proc of table) {
      if (proc.ppid !== parent) continue;
      found.push(proc.pid);
      walk(proc.pid);
    }
  };
  walk(root);
  return found;
}

function statOf(pid: number): { state: string; ppid: number } | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined; // gone
  }
  // pid (comm) state ppid ...: comm may hold spaces and parentheses, so split after the last ')'.
  const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state: state!, ppid: Number(ppid) };
}
