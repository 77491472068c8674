import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stdioServerPayload, writeIntegrationPackage } from '@agent-platform/integrations/testing';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatformTestApi, type PlatformTestApi } from '../testing/platform-test-api.ts';

// The tool loop of an agent in the all-in-one, driven by an OpenAI-protocol model stand-in: the
// tools of the integration its competency lists are offered when allowed, run on a real MCP
// server, and show in tool_calls and the audit trail; a tool the agent may not use is not offered,
// and a call to it anyway is refused (PermissionDenied, reported to the model) and never reaches
// the server.
let api: PlatformTestApi;
let model: FakeOpenAiServer;
let root: string;
let countFile: string;
let agentId: string;

async function pkg(name: string, type: string, file: string, text: string, deps: string[] = []): Promise<string> {
  const dir = join(root, name);
  await mkdir(join(dir, 'payload'), { recursive: true });
  const manifest = [
    '[package]', `type = "${type}"`, `name = "${name}"`, `title = "${name}"`, 'version = "1.0.0"', `description = "${name}."`,
    'license = "MIT"', 'min_platform_version = "0.1.0"', '', '[dependencies]', ...deps.map((d) => `${d} = "*"`), '',
  ].join('\n');
  await writeFile(join(dir, 'package.toml'), manifest);
  await writeFile(join(dir, 'payload', file), text);
  return dir;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ap-tool-loop-'));
  countFile = join(root, 'count.log');
  model = await startFakeOpenAiServer();
  api = await startPlatformTestApi({
    config: { providers: [{ id: 'oa', kind: 'openai', base_url: model.url, models: ['gpt-test'] }], models: { default: 'oa/gpt-test' } },
  });
  const server = await writeIntegrationPackage(root, { name: 'test-server', payload: { file: 'mcp.json', data: stdioServerPayload({ COUNT_FILE: countFile }) } });
  expect((await api.request('POST', '/integrations/install', { body: { name: server } })).status).toBe(201);
  expect((await api.request('POST', '/integrations/test-server/connect')).status).toBe(200);
  await pkg('notes', 'skill', 'SKILL.md', '---\ndescription: Notes.\n---\nKeep notes.\n');
  await pkg('tooling', 'competency', 'COMPETENCY.md', '---\ndescription: Uses the test server.\nskills: [notes]\nintegrations: [test-server]\n---\nUse the tools.\n', ['notes']);
  const agent = await pkg('tool-user', 'agent-template', 'AGENT.md', '---\ndescription: Uses tools.\ncompetencies: [tooling]\nallow_integration_tools: [echo, test-server/fail]\n---\nYou use tools.\n', ['tooling']);
  const installed = await api.request('POST', '/catalog/install', { body: { path: agent, activate: true } });
  expect(installed.status, JSON.stringify(installed.body)).toBe(201);
  agentId = installed.body.installed.at(-1).id;
}, 60_000);

afterAll(async () => {
  await api?.close();
  await model?.close();
  await rm(root, { recursive: true, force: true });
});

describe('the tool loop of an agent', () => {
  it('offers the allowed integration tools only, runs them, and refuses the others without reaching the server', async () => {
    model.script(
      { tool_calls: [{ id: 'c1', name: 'echo', arguments: { message: 'policy HO-1' } }] },
      { tool_calls: [{ id: 'c2', name: 'count', arguments: {} }, { id: 'c3', name: 'fail', arguments: {} }] },
      { text: 'done' },
    );
    const sent = await api.request('POST', `/agents/${agentId}/send`, { body: { message: 'use your tools' } });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    expect(sent.body.content).toBe('done');
    expect(sent.body.tool_calls).toEqual([
      { tool_name: 'echo', skill_id: 'test-server', duration_ms: expect.any(Number), success: true },
      { tool_name: 'count', skill_id: 'test-server', duration_ms: expect.any(Number), success: false },
      { tool_name: 'fail', skill_id: 'test-server', duration_ms: expect.any(Number), success: false },
    ]);
    // Offered: the allowed tools only (echo by name, fail by provider/tool).
    const offered = model.requests[0]!.body.tools.map((t: { function: { name: string } }) => t.function.name).sort();
    expect(offered).toEqual(['echo', 'fail']);
    // What the model was told: the echo result, the refusal and the server's failure.
    const told = model.requests[2]!.body.messages.filter((m: { role: string }) => m.role === 'tool').map((m: { content: string }) => m.content);
    expect(told[0]).toBe('policy HO-1');
    expect(told[1]).toMatch(/may not use tool 'count' of 'test-server'.*allow_integration_tools/);
    expect(told[2]).toMatch(/it failed on purpose/);
    // The refused call never reached the server.
    expect(await readFile(countFile, 'utf8').catch(() => '')).toBe('');
    const audit = await api.request('GET', '/security/audit?category=tools&limit=10');
    const entries = (audit.body.entries ?? audit.body) as Array<{ action: string; result: string; target: string; metadata: Record<string, unknown> }>;
    expect(entries.map((e) => [e.action, e.result]).sort()).toEqual([
      ['tool.call count', 'refused'],
      ['tool.call echo', 'success'],
      ['tool.call fail', 'failure'],
    ]);
    expect(entries.every((e) => e.target === 'test-server' && e.metadata.agent_id === agentId && /^sha256:/.test(String(e.metadata.args_hash)))).toBe(true);
    expect(JSON.stringify(entries)).not.toContain('HO-1');
  });

  it('refuses an agent install whose contract binding the live tools cannot carry, naming the tool and field, installing nothing', async () => {
    await pkg('say-api', 'contract', 'CONTRACT.json', JSON.stringify({ tools: [{ name: 'say', input_schema: { type: 'object', properties: { text: { type: 'string' } } } }] }));
    const server = await writeIntegrationPackage(root, { name: 'say-server', payload: { file: 'mcp.json', data: stdioServerPayload() } });
    const toml = await readFile(join(server, 'package.toml'), 'utf8');
    await writeFile(join(server, 'package.toml'), `${toml}\n[implements.say-api]\nversion = "^1.0.0"\ntool_map = { say = "echo" }\n\n[implements.say-api.field_map]\nsay = { text = "msg" }\n`);
    expect((await api.request('POST', '/integrations/install', { body: { name: server } })).status).toBe(201);
    expect((await api.request('POST', '/integrations/say-server/connect')).status).toBe(200);
    await pkg('speaking', 'competency', 'COMPETENCY.md', '---\ndescription: Speaks.\nskills: [notes]\ncontracts: [say-api]\n---\nSpeak.\n', ['notes', 'say-api']);
    const speaker = await pkg('speaker', 'agent-template', 'AGENT.md', '---\ndescription: Speaks.\ncompetencies: [speaking]\n---\nYou speak.\n', ['speaking']);
    const refused = await api.request('POST', '/catalog/install', { body: { path: speaker } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/field 'text' of contract tool 'say' maps to 'msg', which 'echo' does not accept/);
    expect((await api.request('GET', '/contracts')).body.bindings.map((b: { contract: string }) => b.contract)).not.toContain('say-api');
    const names = (await api.request('GET', '/catalog/installed')).body.packages.map((p: { name: string }) => p.name);
    expect(names).not.toContain('speaker');
    expect(names).not.toContain('speaking');
  });
});
