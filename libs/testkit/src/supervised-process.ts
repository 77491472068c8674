import type { ChildProcess } from 'node:child_process';

/** A spawned server process and the promise of its exit. */
export interface RunningProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
}

/** How long a stopped server may take to exit before it is killed outright. */
const STOP_GRACE_MS = 10_000;

/**
 * Stop, kill and restart for a test server (nats-server, redis-server): `launch` starts it and
 * resolves once it is ready; restart launches again with the same arguments (same port and
 * data dir), so tests can kill a server and bring the same one back.
 */
export async function superviseProcess(launch: () => Promise<RunningProcess>): Promise<{
  /** The running process's pid; undefined while stopped. */
  pid(): number | undefined;
  stop(): Promise<void>;
  kill(): Promise<void>;
  restart(): Promise<void>;
}> {
  let running: RunningProcess | undefined = await launch();
  const stopWith = async (signal: NodeJS.Signals): Promise<void> => {
    const current = running;
    running = undefined;
    if (!current) return;
    current.child.kill(signal);
    const graceful = await Promise.race([current.exited.then(() => true), delay(STOP_GRACE_MS).then(() => false)]);
    if (!graceful) {
      current.child.kill('SIGKILL');
      await current.exited;
    }
  };
  return {
    pid: () => running?.child.pid,
    stop: () => stopWith('SIGTERM'),
    kill: () => stopWith('SIGKILL'),
    restart: async () => {
      await stopWith('SIGTERM');
      running = await launch();
    },
  };
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
