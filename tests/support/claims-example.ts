import { spawn, type ChildProcess } from 'node:child_process';
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort } from '@agent-platform/testkit';
import { ROOT } from './platform-process.ts';

/**
 * The README's tools example (examples/claims-*): the stand-in claims system (an MCP server over
 * streamable HTTP keeping a JSON-lines ledger) and the stand-in model (OpenAI protocol), each a
 * real child process started as the README starts them.
 */
export interface ExampleServer {
  child: ChildProcess;
  port: number;
  url: string;
  output(): string;
  stop(): Promise<void>;
}

export async function startClaimsSystem(ledger: string, env: Record<string, string> = {}, port?: number): Promise<ExampleServer> {
  port ??= await freePort();
  return start([join(ROOT, 'examples/claims-system/server.mjs'), '--port', String(port), '--ledger', ledger], port, `http://127.0.0.1:${port}/mcp`, /MCP server on/, env);
}

export async function startClaimsModel(): Promise<ExampleServer> {
  const port = await freePort();
  return start([join(ROOT, 'examples/claims-model/server.mjs'), '--port', String(port)], port, `http://127.0.0.1:${port}/v1`, /model stand-in on/);
}

/** The claims ledger: every claim the system of record opened. */
export async function ledgerClaims(ledger: string): Promise<Array<{ claim_no: string; policy_no: string; idempotency_key: string | null }>> {
  const text = await readFile(ledger, 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean).map((line) => JSON.parse(line));
}

/**
 * examples/claims-system (and its sibling dependency claims-api) copied to `dir` with mcp.json
 * pointing at `url` instead of the README's fixed port; the [signing] hash is dropped with it.
 */
export async function claimsSystemPackage(dir: string, url: string): Promise<string> {
  for (const name of ['claims-system', 'claims-api']) await cp(join(ROOT, 'examples', name), join(dir, name), { recursive: true });
  const pkg = join(dir, 'claims-system');
  await writeFile(join(pkg, 'payload/mcp.json'), JSON.stringify({ url }));
  const toml = await readFile(join(pkg, 'package.toml'), 'utf8');
  await writeFile(join(pkg, 'package.toml'), toml.replace(/\n\[signing\][^[]*$/s, '\n'));
  return pkg;
}

function start(args: string[], port: number, url: string, ready: RegExp, env: Record<string, string> = {}): Promise<ExampleServer> {
  let output = '';
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env } });
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const server: ExampleServer = {
    child,
    port,
    url,
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${args[0]} did not start:\n${output}`)), 15_000);
    const check = (): void => {
      if (!ready.test(output)) return;
      clearTimeout(timer);
      resolve(server);
    };
    child.stdout.on('data', check);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${args[0]} exited with ${code}:\n${output}`));
    });
  });
}
