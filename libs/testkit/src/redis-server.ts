import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './free-port.ts';
import { delay, superviseProcess, type RunningProcess } from './supervised-process.ts';
import { findBinary } from './require-binary.ts';

export interface RedisServerOptions {
  /** The address to listen on; default 127.0.0.1 (a multi-host test passes its bridge's address). */
  host?: string;
  /**
   * `aof`: append-only file with `appendfsync always`, so a SIGKILL loses no acknowledged write
   * and `restart()` finds every job again (production runs `everysec` or `always`, see
   * docs/architecture.md). `none` (default): nothing on disk, the fastest for plain suites.
   */
  persistence?: 'none' | 'aof';
  /** The redis-server executable; default: found on PATH (or sbin). */
  binary?: string;
  /** How long a start may take before it fails; default 10 s. */
  startTimeoutMs?: number;
}

/** A redis-server child process on a free loopback port: never the machine's shared 6379. */
export interface RedisServerHandle {
  /** `redis://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  /** The server's working dir (the AOF lives here), kept across restarts. */
  readonly dir: string;
  /** The server process's pid (for its memory, say); undefined while it is stopped. */
  pid(): number | undefined;
  /** SIGTERM, then waits for the process to exit. A no-op when it is not running. */
  stop(): Promise<void>;
  /** SIGKILL (a crash: no shutdown save), then waits for the exit. */
  kill(): Promise<void>;
  /** Stops it if running, then starts it again on the same port with the same dir. */
  restart(): Promise<void>;
  /** Stops it and removes its dir: for afterAll. */
  dispose(): Promise<void>;
}

const PING_INTERVAL_MS = 20;

/** Starts redis-server on 127.0.0.1 and resolves once it answers PING with PONG. */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServerHandle> {
  const binary = options.binary ?? findBinary('redis-server');
  if (!binary) throw new Error('redis-server is not installed');
  const startTimeoutMs = options.startTimeoutMs ?? 10_000;
  const host = options.host ?? '127.0.0.1';
  const port = await freePort(host);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'redis-test-'));
  const aof = options.persistence === 'aof';
  const args = ['--bind', host, '--port', String(port), '--save', '', '--appendonly', aof ? 'yes' : 'no', '--dir', dir];
  if (aof) args.push('--appendfsync', 'always');
  // Off the loopback (a multi-host test's own bridge) Redis refuses clients without a password unless told.
  if (host !== '127.0.0.1') args.push('--protected-mode', 'no');

  const server = await superviseProcess(() => launch(binary, args, host, port, startTimeoutMs));

  return {
    url: `redis://${host}:${port}`,
    port,
    dir,
    pid: server.pid,
    stop: server.stop,
    kill: server.kill,
    restart: server.restart,
    dispose: async () => {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Spawns the server and polls PING until PONG (a server still loading its AOF answers
 * `-LOADING`, which is not ready); fails with the log tail if it exits first or times out.
 */
async function launch(binary: string, args: string[], host: string, port: number, timeoutMs: number): Promise<RunningProcess> {
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const log: string[] = [];
  const keep = (chunk: Buffer): void => {
    log.push(chunk.toString('utf8'));
    if (log.length > 50) log.shift();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let failure: Error | undefined;
  child.once('error', (error) => (failure = error));
  void exited.then(() => (failure ??= new Error(`redis-server exited before it was ready:\n${log.join('')}`)));
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (failure) throw failure;
      if (await answersPing(host, port)) return { child, exited };
      if (Date.now() > deadline) throw new Error(`redis-server was not ready after ${timeoutMs} ms:\n${log.join('')}`);
      await delay(PING_INTERVAL_MS);
    }
  } catch (error) {
    // A spawn failure (no such file) never started a process, so there is no exit to wait for.
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
    throw error;
  }
}

/** One raw `PING` over TCP: true on `+PONG`, false on a refused connection or any other reply. */
function answersPing(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    let reply = '';
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('utf8');
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
  });
}

