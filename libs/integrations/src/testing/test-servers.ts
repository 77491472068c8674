import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { AdapterPayload, McpPayload } from '@agent-platform/contracts';

/** The MCP test server script (mcp-test-server.ts). */
export const TEST_SERVER_PATH = fileURLToPath(new URL('./mcp-test-server.ts', import.meta.url));
/** tsx's loader by absolute URL, so the server runs in any working directory. */
const TSX_LOADER = pathToFileURL(
  join(dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist', 'loader.mjs'),
).href;

/** mcp.json for the stdio test server, with extra `env`. */
export function stdioServerPayload(env: Record<string, string> = {}): McpPayload {
  return { command: process.execPath, args: ['--import', TSX_LOADER, TEST_SERVER_PATH], env };
}

export interface HttpTestServer {
  /** The MCP endpoint, `http://127.0.0.1:<port>/mcp`. */
  readonly url: string;
  readonly port: number;
  readonly child: ChildProcess;
  /** SIGKILL, then waits for the exit. */
  kill(): Promise<void>;
}

/** Starts the test server over streamable HTTP in its own process (on `port`, default a free one). */
export async function startHttpTestServer(
  options: { port?: number; env?: Record<string, string> } = {},
): Promise<HttpTestServer> {
  const child = spawn(
    process.execPath,
    ['--import', TSX_LOADER, TEST_SERVER_PATH, '--http', String(options.port ?? 0)],
    {
      env: { PATH: process.env.PATH ?? '', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the MCP HTTP test server did not start:\n${output}`)),
      30_000,
    );
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      const match = /MCP_HTTP_PORT=(\d+)/.exec(output);
      if (match !== null) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the MCP HTTP test server exited with ${code}:\n${output}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    child,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

export interface IntegrationPackageSpec {
  name: string;
  version?: string;
  payload:
    | { file: 'mcp.json'; data: McpPayload | Record<string, unknown> }
    | { file: 'adapter.json'; data: AdapterPayload | Record<string, unknown> };
  /** `[implements.<contract>]` tables, tool_map only. */
  implements?: Record<string, Record<string, string>>;
}

/** Writes an integration package directory (DECISIONS D4) under `root`; returns its path. */
export async function writeIntegrationPackage(root: string, spec: IntegrationPackageSpec): Promise<string> {
  const dir = join(root, spec.name);
  await mkdir(join(dir, 'payload'), { recursive: true });
  const lines = [
    '[package]',
    'type = "integration"',
    `name = "${spec.name}"`,
    `title = "Integration ${spec.name}"`,
    `version = "${spec.version ?? '1.0.0'}"`,
    `description = "The integration ${spec.name}."`,
    'license = "MIT"',
    'min_platform_version = "0.1.0"',
  ];
  for (const [contract, toolMap] of Object.entries(spec.implements ?? {})) {
    const map = Object.entries(toolMap)
      .map(([k, v]) => `${k} = "${v}"`)
      .join(', ');
    lines.push('', `[implements.${contract}]`, 'version = "^1.0.0"', `tool_map = { ${map} }`);
  }
  await writeFile(join(dir, 'package.toml'), `${lines.join('\n')}\n`);
  await writeFile(join(dir, 'payload', spec.payload.file), JSON.stringify(spec.payload.data, null, 2));
  return dir;
}

/**
 * Writes a skill, a competency and an agent template that equips it, beside each other under
 * `root` (the agent's dependencies resolve from there): the competency lists `contracts` and/or
 * `integrations`, so the agent, once Running, is a live consumer. Returns the agent package dir.
 */
export async function writeConsumerFamily(
  root: string,
  spec: { agent: string; competency: string; contracts?: string[]; integrations?: string[] },
): Promise<string> {
  const skill = `${spec.competency}-skill`;
  const manifest = (type: string, name: string, deps: string[]): string =>
    [
      '[package]',
      `type = "${type}"`,
      `name = "${name}"`,
      `title = "${name}"`,
      'version = "1.0.0"',
      `description = "The ${type} ${name}."`,
      'license = "MIT"',
      'min_platform_version = "0.1.0"',
      '',
      '[dependencies]',
      ...deps.map((d) => `${d} = "*"`),
      '',
    ].join('\n');
  const write = async (
    name: string,
    type: string,
    deps: string[],
    file: string,
    text: string,
  ): Promise<string> => {
    const dir = join(root, name);
    await mkdir(join(dir, 'payload'), { recursive: true });
    await writeFile(join(dir, 'package.toml'), manifest(type, name, deps));
    await writeFile(join(dir, 'payload', file), text);
    return dir;
  };
  const list = (items: string[] | undefined): string => `[${(items ?? []).join(', ')}]`;
  await write(
    skill,
    'skill',
    [],
    'SKILL.md',
    '---\ndescription: A skill.\nruntime: promptonly\n---\nBe helpful.\n',
  );
  await write(
    spec.competency,
    'competency',
    [skill],
    'COMPETENCY.md',
    `---\ndescription: A competency.\nskills: [${skill}]\ncontracts: ${list(spec.contracts)}\nintegrations: ${list(spec.integrations)}\n---\nHandle claims.\n`,
  );
  return write(
    spec.agent,
    'agent-template',
    [spec.competency],
    'AGENT.md',
    `---\ndescription: An agent.\ncompetencies: [${spec.competency}]\n---\nYou are an agent.\n`,
  );
}
