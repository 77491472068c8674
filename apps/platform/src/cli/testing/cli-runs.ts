import { PLATFORM_LOADER } from '@agent-platform/testkit';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runCli } from '../run-cli.ts';

/** The repository root (examples/, node_modules/). */
export const REPO_ROOT = fileURLToPath(new URL('../../../../../', import.meta.url));
/** The CLI entry `npm run cli` runs. */
const CLI_MAIN = fileURLToPath(new URL('../main.ts', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliRunOptions {
  cwd: string;
  /** The environment beyond PATH (a process) or instead of it (in this process). */
  env?: Record<string, string>;
  /** Written to standard input, then closed (a process); the secret a prompt reads (in this process). */
  stdin?: string;
}

/** The CLI's own Node process through the platform's loader (as `npm run cli`), PATH and `env` only, its three streams piped. */
export function spawnCliProcess(
  args: readonly string[],
  options: Pick<CliRunOptions, 'cwd' | 'env'>,
): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, ['--import', PLATFORM_LOADER, CLI_MAIN, ...args], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '', ...options.env },
  });
}

/** `agent-platform <args>` as a user runs it (`spawnCliProcess`), its output collected. */
export function runCliProcess(args: readonly string[], options: CliRunOptions): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawnCliProcess(args, options);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? '');
  });
}

/** `runCli` in this process with its output collected: faster, for what does not need a real process. */
export async function runCliHere(args: readonly string[], options: CliRunOptions): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    cwd: options.cwd,
    out: (line) => (stdout += `${line}\n`),
    err: (line) => (stderr += `${line}\n`),
    ...(options.env === undefined ? {} : { env: options.env }),
    ...(options.stdin === undefined ? {} : { readSecret: async () => options.stdin ?? '' }),
  });
  return { code, stdout, stderr };
}
