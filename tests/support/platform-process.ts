import { PLATFORM_LOADER } from '@agent-platform/testkit';
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'smol-toml';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PLATFORM_MAIN = fileURLToPath(new URL('../../apps/platform/src/main.ts', import.meta.url));

export interface PlatformProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
  /** Resolves with the address once the process prints its listening line. */
  listening(timeoutMs?: number): Promise<string>;
  kill(): void;
}

/** Starts the all-in-one platform the way `npm start` does, in `cwd`, with extra args. */
export function startPlatform(cwd: string, args: string[] = [], env: Record<string, string> = {}): PlatformProcess {
  let output = '';
  const child = spawn(process.execPath, ['--import', PLATFORM_LOADER, PLATFORM_MAIN, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', ...env },
  });
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    output: () => output,
    exited,
    async listening(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const match = /listening on (\S+)/.exec(output);
        if (match?.[1] !== undefined) return match[1];
        if (child.exitCode !== null) throw new Error(`platform exited with ${child.exitCode}:\n${output}`);
        if (Date.now() > deadline) throw new Error(`platform did not start in ${timeoutMs} ms:\n${output}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    kill: () => {
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

/**
 * The all-in-one on a config of the test's own: `config` written as `<dir>/agent-platform.toml`,
 * the platform started on it in `dir`, resolved once it listens (its base URL beside it).
 */
export async function startConfiguredPlatform(dir: string, config: Record<string, unknown>): Promise<{ platform: PlatformProcess; base: string }> {
  const file = join(dir, 'agent-platform.toml');
  await writeFile(file, stringify(config));
  const platform = startPlatform(dir, ['--config', file]);
  return { platform, base: await platform.listening(60_000) };
}

/**
 * What a reader does to restart the all-in-one: Ctrl-C in its terminal (unless it already stopped,
 * e.g. after POST /shutdown), which must end it cleanly, then `npm start [-- args]` in `cwd`;
 * resolves with the new process once it listens.
 */
export async function restartPlatform(current: PlatformProcess, cwd: string, args: string[] = []): Promise<PlatformProcess> {
  if (current.child.exitCode === null) current.child.kill('SIGINT');
  const code = await current.exited;
  if (code !== 0) throw new Error(`the platform exited with ${code} on Ctrl-C:\n${current.output()}`);
  const next = startPlatform(cwd, args);
  await next.listening(90_000);
  return next;
}

/** A small JSON client for the tour: returns status and parsed body. */
export async function call(
  base: string,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON shapes
): Promise<{ status: number; body: any; text: string; headers: Record<string, string> }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${base}${path}`, {
    method,
    headers,
    body: options.body === undefined ? null : JSON.stringify(options.body),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON (metrics exposition): keep the text.
  }
  return { status: res.status, body, text, headers: Object.fromEntries(res.headers) };
}
