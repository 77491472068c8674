import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

// The packages of the tool-call journal targets, written for the run: an integration over the
// bench MCP server (bench/servers/mcp-tools.ts), a competency listing it (with the one skill a
// competency must list), an agent allowed its tools, and a one-step workflow calling the agent.

export const TOOL_INTEGRATION = 'bench-tools';
export const TOOL_AGENT = 'bench-tool-agent';
const TOOL_WORKFLOW = 'bench-tool-step';
const TOOL_COMPETENCY = 'bench-tool-use';
const TOOL_SKILL = 'bench-tool-guide';

/** Installs the integration, connects it, installs the agent (activated) and the workflow; their ids. */
export async function installToolPackages(
  url: string,
  token: string,
  dir: string,
  mcpUrl: string,
): Promise<{ agentId: string; workflowId: string }> {
  await writePackages(dir, mcpUrl);
  await post(url, token, '/integrations/install', { name: join(dir, TOOL_INTEGRATION) }, 201);
  // Answers once every live agent worker reports the integration (or the wait runs out).
  await post(url, token, `/integrations/${TOOL_INTEGRATION}/connect`, undefined, 200);
  const status = await get(url, token, `/integrations/${TOOL_INTEGRATION}/status`);
  if (status.status !== 'Running')
    throw new Error(`the ${TOOL_INTEGRATION} integration is not running: ${JSON.stringify(status)}`);
  const agentId = await install(url, token, dir, TOOL_AGENT);
  const workflowId = await install(url, token, dir, TOOL_WORKFLOW);
  return { agentId, workflowId };
}

async function writePackages(dir: string, mcpUrl: string): Promise<void> {
  await writePackage(
    dir,
    'skill',
    TOOL_SKILL,
    {},
    'SKILL.md',
    '---\ndescription: When to call the bench tools.\nruntime: promptonly\n---\nCall a tool only when you are asked to.\n',
  );
  await writePackage(
    dir,
    'integration',
    TOOL_INTEGRATION,
    {},
    'mcp.json',
    JSON.stringify({ url: `${mcpUrl}/mcp` }),
  );
  await writePackage(
    dir,
    'competency',
    TOOL_COMPETENCY,
    { [TOOL_SKILL]: '^1.0.0', [TOOL_INTEGRATION]: '^1.0.0' },
    'COMPETENCY.md',
    `---\ndescription: Reads and writes bench records.\nskills: [${TOOL_SKILL}]\nintegrations: [${TOOL_INTEGRATION}]\n---\nRead or write a record when asked to.\n`,
  );
  await writePackage(
    dir,
    'agent-template',
    TOOL_AGENT,
    { [TOOL_COMPETENCY]: '^1.0.0' },
    'AGENT.md',
    `---\ndescription: Calls the tool it is asked to call.\ncompetencies: [${TOOL_COMPETENCY}]\nallow_integration_tools: ["${TOOL_INTEGRATION}/*"]\n---\nYou are the bench's tool agent.\n`,
  );
  await writePackage(
    dir,
    'workflow-template',
    TOOL_WORKFLOW,
    {},
    'workflow.json',
    JSON.stringify({
      description: 'One step: the tool agent, given the input.',
      agents_required: [TOOL_AGENT],
      steps: [{ name: 'call', agent: TOOL_AGENT }],
    }),
  );
}

async function writePackage(
  dir: string,
  type: string,
  name: string,
  dependencies: Record<string, string>,
  file: string,
  payload: string,
): Promise<void> {
  const root = join(dir, name);
  await mkdir(join(root, 'payload'), { recursive: true });
  const deps = Object.entries(dependencies).map(([dep, range]) => `${dep} = "${range}"`);
  const manifest = [
    '[package]',
    `type = "${type}"`,
    `name = "${name}"`,
    `title = "Bench ${name}"`,
    'version = "1.0.0"',
    `description = "The ${type} ${name} of the tool-call journal bench."`,
    'license = "Apache-2.0"',
    'min_platform_version = "0.1.0"',
    ...(deps.length === 0 ? [] : ['', '[dependencies]', ...deps]),
    '',
  ];
  await writeFile(join(root, 'package.toml'), manifest.join('\n'));
  await writeFile(join(root, 'payload', file), payload);
}

/** `POST /catalog/install` of the package directory `name` (siblings resolve its dependencies), activated. */
async function install(url: string, token: string, dir: string, name: string): Promise<string> {
  const reply = (await post(
    url,
    token,
    '/catalog/install',
    { path: join(dir, name), activate: true },
    201,
  )) as { installed: Array<{ name: string; id?: string }> };
  const id = reply.installed.find((p) => p.name === name)?.id;
  if (id === undefined) throw new Error(`${name} was not installed: ${JSON.stringify(reply)}`);
  return id;
}

// Each request on a connection of its own: a keep-alive connection left in fetch's pool can hold
// the platform's graceful stop (docs/performance.md "Workflows (issue 9)", W4).
async function post(
  url: string,
  token: string,
  path: string,
  body: unknown,
  expected: number,
): Promise<unknown> {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      connection: 'close',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (res.status !== expected) throw new Error(`POST ${path} answered ${res.status}: ${text}`);
  return JSON.parse(text) as unknown;
}

async function get(url: string, token: string, path: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${url}${path}`, {
    headers: { authorization: `Bearer ${token}`, connection: 'close' },
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}
