import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './free-port.ts';
import { superviseProcess, type RunningProcess } from './supervised-process.ts';
import { findBinary } from './require-binary.ts';

export interface NatsServerOptions {
  /** The address to listen on; default 127.0.0.1 (a multi-host test passes its bridge's address). */
  host?: string;
  /** Enable JetStream with file storage in a fresh temp dir; default true. */
  jetstream?: boolean;
  /** The nats-server executable; default: found on PATH (or sbin). */
  binary?: string;
  /** How long a start may take before it fails; default 10 s. */
  startTimeoutMs?: number;
  /**
   * The server's ping interval to its clients (nats-server's `ping_interval`, with `ping_max` 2):
   * a client cut off by a partition is dropped, and leaves its queue groups, after about 3 of
   * these. Default: nats-server's own (2 minutes), as a test of one host needs.
   */
  pingIntervalSecs?: number;
}

/** A nats-server child process listening on a free loopback port. */
export interface NatsServerHandle {
  /** `nats://127.0.0.1:<port>` (or the `host` asked for): nothing else is ever contacted. */
  readonly url: string;
  readonly port: number;
  /** The JetStream store dir (kept across restarts), or undefined without JetStream. */
  readonly storeDir: string | undefined;
  /** The server process's pid (for its memory, say); undefined while it is stopped. */
  pid(): number | undefined;
  /** SIGTERM, then waits for the process to exit. A no-op when it is not running. */
  stop(): Promise<void>;
  /** SIGKILL (a crash: no clean shutdown of the store), then waits for the exit. */
  kill(): Promise<void>;
  /** Stops it if running, then starts it again on the same port with the same store dir. */
  restart(): Promise<void>;
  /** Stops it and removes the store dir: for afterAll. */
  dispose(): Promise<void>;
}


/** Starts nats-server on 127.0.0.1 and resolves once it logs "Server is ready". */
export async function startNatsServer(options: NatsServerOptions = {}): Promise<NatsServerHandle> {
  const binary = options.binary ?? findBinary('nats-server');
  if (!binary) throw new Error('nats-server is not installed');
  const jetstream = options.jetstream ?? true;
  const startTimeoutMs = options.startTimeoutMs ?? 10_000;
  const host = options.host ?? '127.0.0.1';
  const port = await freePort(host);
  const storeDir = jetstream ? await mkdtemp(path.join(os.tmpdir(), 'nats-js-')) : undefined;
  const args = ['-a', host, '-p', String(port), ...(storeDir ? ['-js', '-sd', storeDir] : [])];
  if (options.pingIntervalSecs !== undefined) {
    const confDir = await mkdtemp(path.join(os.tmpdir(), 'nats-conf-'));
    const conf = path.join(confDir, 'nats.conf');
    await writeFile(conf, `ping_interval: "${options.pingIntervalSecs}s"\nping_max: 2\n`);
    args.push('-c', conf);
  }

  const server = await superviseProcess(() => launch(binary, args, startTimeoutMs));

  return {
    url: `nats://${host}:${port}`,
    port,
    storeDir,
    pid: server.pid,
    stop: server.stop,
    kill: server.kill,
    restart: server.restart,
    dispose: async () => {
      await server.stop();
      if (storeDir) await rm(storeDir, { recursive: true, force: true });
    },
  };
}

/** Spawns the server and waits for its ready line; fails with the log tail if it exits first. */
async function launch(binary: string, args: string[], timeoutMs: number): Promise<RunningProcess> {
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const log: string[] = [];
  let ready = false;
  const readyLine = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`nats-server was not ready after ${timeoutMs} ms:\n${log.join('')}`)), timeoutMs);
    const onData = (chunk: Buffer): void => {
      log.push(chunk.toString('utf8'));
      if (log.length > 50) log.shift();
      if (!ready && log.join('').includes('Server is ready')) {
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
      reject(new Error(`nats-server exited before it was ready:\n${log.join('')}`));
    });
  });
  try {
    await readyLine;
  } catch (error) {
    // A spawn failure (no such file) never started a process, so there is no exit to wait for.
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
    throw error;
  }
  return { child, exited };
}

