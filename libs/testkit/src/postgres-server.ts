import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { appendFileSync, chownSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './free-port.ts';
import { descendantsOf, processRunning } from './process-alive.ts';
import { findBinary } from './require-binary.ts';
import { delay } from './supervised-process.ts';

export interface PostgresServerOptions {
  /**
   * Start from a copy of this (stopped) server's data dir instead of a fresh `initdb`: a second
   * server holding the same data, for failover tests.
   */
  copyDataFrom?: string;
  /**
   * The `postgres` superuser's password: TCP connections then need it (scram-sha-256), and
   * `url` carries none (tests add it where they mean to). Default: none, trust authentication.
   */
  password?: string;
  /** The port to listen on; default a free one. */
  port?: number;
  /**
   * The address to listen on; default 127.0.0.1. Another address (a multi-host test's bridge) is
   * also let in from its /24 with the same authentication as loopback (pg_hba.conf).
   */
  host?: string;
  /** How long a start may take before it fails; default 30 s. */
  startTimeoutMs?: number;
}

/** A `postgres` child process on a free loopback port: never the machine's own 5432. */
export interface PostgresServerHandle {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication, loopback only). */
  readonly url: string;
  readonly port: number;
  /** The cluster's data dir (kept across restarts). */
  readonly dataDir: string;
  /** The URL of another database on this server. */
  urlOf(database: string): string;
  /** `createdb <name>`; resolves to its URL. */
  createDatabase(name: string): Promise<string>;
  /** The postmaster's pid; undefined while it is stopped. */
  pid(): number | undefined;
  /** Fast shutdown (SIGINT: open sessions are cut, then a clean checkpoint), waits for the exit. */
  stop(): Promise<void>;
  /** SIGKILL to the postmaster and every backend (a crash: recovery runs at the next start). */
  kill(): Promise<void>;
  /** Stops it if running, then starts it again on the same port with the same data dir. */
  restart(): Promise<void>;
  /** Stops it and removes its dir: for afterAll. */
  dispose(): Promise<void>;
}

const STOP_GRACE_MS = 15_000;

/**
 * `initdb` into a fresh temp dir, then `postgres -D <dir> -h 127.0.0.1 -p <free port> -k <dir>`
 * with fsync and full-page writes off (test speed: a SIGKILL of the server still loses nothing
 * committed, only an OS crash would). PostgreSQL refuses to run as root, and CI runs as root:
 * then both run as the `postgres` system user (Debian's package creates it), in a dir it owns.
 * Resolves once the server logs that it accepts connections.
 */
export async function startPostgresServer(options: PostgresServerOptions = {}): Promise<PostgresServerHandle> {
  const initdb = findBinary('initdb');
  if (!initdb) throw new Error('initdb is not installed');
  // The server and tools of the same installation as initdb (Debian: /usr/lib/postgresql/<ver>/bin).
  const bin = path.dirname(realpathSync(initdb));
  const user = runAsUser();
  const root = await mkdtemp(path.join(os.tmpdir(), 'pg-test-'));
  if (user) chownSync(root, user.uid, user.gid);
  const dataDir = path.join(root, 'data');
  if (options.copyDataFrom) {
    run('cp', ['-a', options.copyDataFrom, dataDir], undefined);
    spawnSync('rm', ['-f', path.join(dataDir, 'postmaster.pid')]);
  } else {
    const auth = ['--auth=trust'];
    if (options.password !== undefined) {
      const pwfile = path.join(root, 'pwfile');
      writeFileSync(pwfile, `${options.password}\n`, { mode: 0o600 });
      if (user) chownSync(pwfile, user.uid, user.gid);
      auth.splice(0, 1, '--auth-local=trust', '--auth-host=scram-sha-256', `--pwfile=${pwfile}`);
    }
    run(path.join(bin, 'initdb'), ['-D', dataDir, '-U', 'postgres', ...auth, '-E', 'UTF8', '--no-locale', '--no-sync'], user);
  }
  const host = options.host ?? '127.0.0.1';
  if (host !== '127.0.0.1' && !options.copyDataFrom) allowSubnetOf(dataDir, host, options.password === undefined ? 'trust' : 'scram-sha-256');
  const port = options.port ?? (await freePort(host));
  const args = ['-D', dataDir, '-h', host, '-p', String(port), '-k', root, '-c', 'fsync=off', '-c', 'full_page_writes=off', '-c', 'max_connections=200'];
  const startTimeoutMs = options.startTimeoutMs ?? 30_000;
  const launchServer = () => launch(path.join(bin, 'postgres'), args, user, startTimeoutMs);
  let running: Running | undefined = await launchServer();

  const stopWith = async (signal: NodeJS.Signals): Promise<void> => {
    const current = running;
    running = undefined;
    if (!current) return;
    const pid = current.child.pid!;
    // PostgreSQL puts each backend in a session of its own (setsid), so a signal to the
    // postmaster's group reaches the postmaster alone. A SIGKILL goes to every process of the
    // server, as a crash of its host would; a stop lets the postmaster end its backends.
    const family = [pid, ...descendantsOf(pid)];
    if (signal === 'SIGKILL') for (const member of family) signalGroup(member, 'SIGKILL', false);
    else signalGroup(pid, signal, true);
    const clean = await Promise.race([current.exited.then(() => true), delay(STOP_GRACE_MS).then(() => false)]);
    if (!clean) {
      for (const member of family) signalGroup(member, 'SIGKILL', false);
      await current.exited;
    }
    // The postmaster can be gone while its backends are still exiting and still attached to its
    // shared memory: a start then fails with "pre-existing shared memory block is still in use".
    await untilGone(family);
  };
  const urlOf = (database: string) => `postgres://postgres@${host}:${port}/${encodeURIComponent(database)}`;
  return {
    url: urlOf('postgres'),
    port,
    dataDir,
    urlOf,
    createDatabase: async (name) => {
      // Over the Unix socket in the server's dir: trust authentication, whatever the TCP side needs.
      run(path.join(bin, 'createdb'), ['-h', root, '-p', String(port), '-U', 'postgres', name], undefined);
      return urlOf(name);
    },
    pid: () => running?.child.pid,
    stop: () => stopWith('SIGINT'),
    kill: () => stopWith('SIGKILL'),
    restart: async () => {
      await stopWith('SIGINT');
      running = await launchServer();
    },
    dispose: async () => {
      await stopWith('SIGINT');
      await rm(root, { recursive: true, force: true });
    },
  };
}

interface Running {
  child: ChildProcess;
  exited: Promise<void>;
}

interface SystemUser {
  uid: number;
  gid: number;
}

/** The `postgres` system user when running as root (else undefined: run as ourselves). */
function runAsUser(): SystemUser | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('postgres:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  if (uid === undefined || gid === undefined) {
    throw new Error('running as root, and PostgreSQL refuses root: the postgres system user is missing (apt-get install postgresql)');
  }
  return { uid: Number(uid), gid: Number(gid) };
}

function run(binary: string, args: string[], user: SystemUser | undefined): void {
  const result = spawnSync(binary, args, { encoding: 'utf8', timeout: 60_000, ...(user ?? {}) });
  if (result.status !== 0) {
    throw new Error(`${path.basename(binary)} ${args.join(' ')} failed (${result.status ?? result.signal ?? result.error?.message}):\n${result.stdout}${result.stderr}`);
  }
}

/** Resolves once none of `pids` is a live process (zombies aside: they hold no memory), or after the grace. */
async function untilGone(pids: number[]): Promise<void> {
  const deadline = Date.now() + STOP_GRACE_MS;
  while (pids.some(processRunning) && Date.now() < deadline) await delay(20);
}

function signalGroup(pid: number, signal: NodeJS.Signals, group: boolean): void {
  try {
    process.kill(group ? -pid : pid, signal);
  } catch {
    // Already gone.
  }
}

/** Spawns the postmaster and waits for "ready to accept connections"; fails with the log tail. */
async function launch(binary: string, args: string[], user: SystemUser | undefined, timeoutMs: number): Promise<Running> {
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true, ...(user ?? {}) });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const log: string[] = [];
  let ready = false;
  const readyLine = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`postgres was not ready after ${timeoutMs} ms:\n${log.join('')}`)), timeoutMs);
    const onData = (chunk: Buffer): void => {
      log.push(chunk.toString('utf8'));
      if (log.length > 50) log.shift();
      if (!ready && log.join('').includes('ready to accept connections')) {
        ready = true;
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`postgres exited before it was ready:\n${log.join('')}`));
    });
  });
  try {
    await readyLine;
  } catch (error) {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      signalGroup(child.pid, 'SIGKILL', true);
      await exited;
    }
    throw error;
  }
  return { child, exited };
}

/** Lets the /24 of `host` in (initdb's pg_hba.conf names loopback only). */
function allowSubnetOf(dataDir: string, host: string, method: string): void {
  const subnet = `${host.split('.').slice(0, 3).join('.')}.0/24`;
  appendFileSync(path.join(dataDir, 'pg_hba.conf'), `host all all ${subnet} ${method}\n`);
}
