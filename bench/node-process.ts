import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { PLATFORM_LOADER } from '@agent-platform/testkit';

/** The repository root: where relative bench paths start. */
export const ROOT = fileURLToPath(new URL('../', import.meta.url));

export interface NodeProcessOptions {
  /** TypeScript entry point, absolute. */
  entry: string;
  args?: string[];
  cwd: string;
  env?: Record<string, string>;
  /** Extra Node flags (`--cpu-prof`, ...). */
  nodeFlags?: string[];
  /** stdout and stderr go to this file, not to a pipe the bench process would have to drain. */
  logFile: string;
}

export interface NodeProcess {
  pid: number;
  /** Resolves with the base URL once the process prints `listening on <url>`. */
  listening(timeoutMs?: number): Promise<string>;
  /** Resolves with the first match of `pattern` in the output (a boot line), or throws once it exits. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  /** SIGTERM, then SIGKILL if it has not exited within the deadline (a profile needs a clean exit). */
  stop(timeoutMs?: number): Promise<void>;
}

/**
 * Starts a TypeScript entry point with the same Node as the bench, through the loader `npm start`
 * uses (PLATFORM_LOADER: scripts/ts-loader/register.mjs). Output
 * goes to a file: a pipe read by the bench would put the server's logging cost on the load
 * generator's CPU as well.
 */
export function startNodeProcess(options: NodeProcessOptions): NodeProcess {
  const fd = openSync(options.logFile, 'a');
  const child: ChildProcess = spawn(
    process.execPath,
    [...(options.nodeFlags ?? []), '--import', PLATFORM_LOADER, options.entry, ...(options.args ?? [])],
    { cwd: options.cwd, env: { PATH: process.env.PATH ?? '', ...options.env }, stdio: ['ignore', fd, fd] },
  );
  closeSync(fd);
  if (child.pid === undefined) throw new Error(`could not start ${options.entry}`);
  const pid = child.pid;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const output = () => readFile(options.logFile, 'utf8');

  const waitFor = async (pattern: RegExp, timeoutMs = 30_000): Promise<RegExpExecArray> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const text = await output();
      const match = pattern.exec(text);
      if (match !== null) return match;
      if (child.exitCode !== null) throw new Error(`${options.entry} exited with ${child.exitCode}:\n${text}`);
      if (Date.now() > deadline)
        throw new Error(`${options.entry} did not print ${pattern} within ${timeoutMs} ms:\n${text}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  return {
    pid,
    waitFor,
    async listening(timeoutMs = 30_000) {
      const match = await waitFor(/listening on (http:\/\/\S+)/, timeoutMs);
      return match[1]!;
    },
    async stop(timeoutMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), timeoutMs)));
      if ((await Promise.race([exited, late])) === 'late') {
        child.kill('SIGKILL');
        await exited;
      }
      clearTimeout(timer);
    },
  };
}

/** Resident set size of a live process in bytes, from /proc (Linux); null elsewhere or once it is gone. */
export async function readRssBytes(pid: number): Promise<number | null> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
    return kb === undefined ? null : Number(kb) * 1024;
  } catch {
    return null;
  }
}
