import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { argsHash } from '@agent-platform/domain';
import { stdioServerPayload, writeIntegrationPackage } from '@agent-platform/integrations/testing';
import { corpusMessage, leakedValues, NAME_CORPUS, PII_CORPUS } from '@agent-platform/privacy/testing';
import { startFakeOpenAiServer, type FakeOpenAiServer, type RecordedRequest } from '@agent-platform/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  insertAgent,
  parseEventStream,
  startPlatformTestApi,
  type PlatformTestApi,
} from '../testing/platform-test-api.ts';

// Issue 13 item 2, the privacy gateway in the all-in-one: the model stand-in is a local server
// speaking the OpenAI protocol that records every request body and echoes the last user message
// (so it echoes the tokens it got). A seeded corpus of personal data goes in through send,
// invoke, the SSE stream, /chat/completions, a workflow step and a tool call; no value may
// reach the stand-in, every value must come back to the caller, and neither the audit trail nor
// the process logs may hold one (docs/privacy-gateway.md).
let model: FakeOpenAiServer;
let api: PlatformTestApi | null = null;

/** The stand-in: echoes the last user message, as a model that copies the tokens it is given. */
function echo(request: RecordedRequest) {
  const messages = (request.body?.messages ?? []) as Array<{ role: string; content: string }>;
  return { text: messages.filter((m) => m.role === 'user').at(-1)?.content ?? '' };
}

beforeAll(async () => {
  model = await startFakeOpenAiServer({ fallback: echo });
});
afterAll(async () => model.close());
afterEach(async () => {
  await api?.close();
  api = null;
  model.requests.length = 0;
});

const cloud = (extra: Record<string, unknown> = {}) => ({
  providers: [{ id: 'oa', kind: 'openai' as const, base_url: model.url, models: ['gpt-test'] }],
  models: { default: 'oa/gpt-test' },
  ...extra,
});

/** Everything the stand-in was sent, as one text. */
const sentToModel = () => JSON.stringify(model.requests.map((r) => r.body));

describe('the privacy gateway in front of the model', () => {
  it('send and invoke: the stand-in never sees a value of the corpus, the caller gets every value back', async () => {
    api = await startPlatformTestApi({ config: cloud() });
    const agent = await insertAgent(api);
    const message = corpusMessage();

    const sent = await api.request('POST', `/agents/${agent.id}/send`, { body: { message } });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    expect(sent.body.content).toBe(message);

    const invoked = await api.request('POST', `/agents/${agent.id}/invoke`, {
      body: { source: 'Api', message, correlation_id: 'corpus-1' },
    });
    expect(invoked.status, JSON.stringify(invoked.body)).toBe(200);
    expect(invoked.body.content).toBe(message);

    // The second call carried the first exchange as history: tokenised too.
    expect(model.requests).toHaveLength(2);
    expect(
      model.requests[1]!.body.messages.filter((m: { role: string }) => m.role !== 'system'),
    ).toHaveLength(3);
    expect(leakedValues(sentToModel())).toEqual([]);
    expect(sentToModel()).toMatch(/\[\[PII:EMAIL:[0-9a-f]{4}\]\]/);
  });

  it('streams: no token or part of one reaches the client, the pieces join to the values', async () => {
    api = await startPlatformTestApi({ config: cloud() });
    const agent = await insertAgent(api);
    const message = corpusMessage();
    const res = await api.request('POST', `/agents/${agent.id}/send`, {
      body: { message },
      headers: { accept: 'text/event-stream' },
    });
    expect(res.status).toBe(200);
    const events = parseEventStream(res.body as string);
    const pieces = events.filter((e) => e.event === 'token').map((e) => JSON.parse(e.data).text as string);
    expect(pieces.length).toBeGreaterThan(10);
    expect(pieces.join('')).toBe(message);
    for (const piece of pieces) expect(piece).not.toMatch(/\[\[PII|PII:[A-Z_]+:/);
    expect(JSON.parse(events.at(-1)!.data).content).toBe(message);

    const chat = await api.request('POST', '/chat/completions', {
      body: { model: agent.name, stream: true, messages: [{ role: 'user', content: message }] },
    });
    const deltas = parseEventStream(chat.body as string)
      .filter((e) => e.data !== '[DONE]')
      .map((e) => JSON.parse(e.data).choices?.[0]?.delta?.content ?? '')
      .join('');
    expect(deltas).toBe(message);
    expect(leakedValues(sentToModel())).toEqual([]);
  });

  it('tokenises names too when person_name is configured', async () => {
    api = await startPlatformTestApi({
      config: cloud({ gateway: { categories: ['email', 'person_name'] } }),
    });
    const agent = await insertAgent(api);
    const message = corpusMessage(NAME_CORPUS);
    const res = await api.request('POST', `/agents/${agent.id}/send`, { body: { message } });
    expect(res.body.content).toBe(message);
    expect(leakedValues(sentToModel(), NAME_CORPUS)).toEqual([]);
    expect(sentToModel()).toContain('[[PII:NAME:');
  });

  it('POST /workflows/step answers pii_tokenized: true when the step’s model request was tokenised', async () => {
    api = await startPlatformTestApi({ config: cloud() });
    const agent = await insertAgent(api);
    const step = (input: string) =>
      api!.request('POST', '/workflows/step', { body: { target_agent: agent.id, input } });
    // Without personal data first: the legacy step keeps the agent's session, whose history the
    // next step's request carries (and tokenises).
    const without = await step('Summarise the storm damage claim');
    expect(without.body).toMatchObject({ output: 'Summarise the storm damage claim', pii_tokenized: false });
    const withPii = await step('Customer DOB: 14/03/1985, card 4111 1111 1111 1111');
    expect(withPii.body).toMatchObject({
      output: 'Customer DOB: 14/03/1985, card 4111 1111 1111 1111',
      pii_tokenized: true,
    });
    expect(leakedValues(sentToModel())).toEqual([]);
  });

  it('keeps every value out of the audit trail and the logs, which carry counts and categories', async () => {
    api = await startPlatformTestApi({ config: cloud() });
    const agent = await insertAgent(api);
    const message = corpusMessage();
    expect((await api.request('POST', `/agents/${agent.id}/send`, { body: { message } })).status).toBe(200);
    // A refusal by the provider is logged and answered: with tokens in its text at most.
    model.script({ status: 400, message: 'the request was refused' });
    expect((await api.request('POST', `/agents/${agent.id}/send`, { body: { message } })).status).toBe(502);

    const trail = await api.request('GET', '/security/audit?limit=1000');
    expect(leakedValues(JSON.stringify(trail.body))).toEqual([]);
    expect(JSON.stringify(trail.body)).not.toMatch(/\[\[PII:/);
    const privacy = trail.body.entries.filter((e: { category: string }) => e.category === 'privacy');
    const tokenised = privacy.find((e: { action: string }) => e.action === 'gateway.pii.tokenised');
    const expected: Record<string, number> = {};
    for (const { category } of PII_CORPUS) expected[category] = (expected[category] ?? 0) + 1;
    expect(tokenised.metadata).toMatchObject({
      count: PII_CORPUS.length,
      categories: expected,
      provider: 'oa',
      model: 'gpt-test',
    });
    expect(leakedValues(api.logs().join('\n'))).toEqual([]);
    const logs = await api.request('GET', '/logs?lines=2000');
    expect(leakedValues(JSON.stringify(logs.body))).toEqual([]);
  });
});

describe('tool calls', () => {
  let root: string;
  afterEach(async () => rm(root, { recursive: true, force: true }));

  /** A package directory with its manifest and one payload file. */
  async function pkg(
    name: string,
    type: string,
    file: string,
    text: string,
    deps: string[] = [],
  ): Promise<string> {
    const dir = join(root, name);
    await mkdir(join(dir, 'payload'), { recursive: true });
    const manifest = [
      '[package]',
      `type = "${type}"`,
      `name = "${name}"`,
      `title = "${name}"`,
      'version = "1.0.0"',
      `description = "${name}."`,
    ];
    manifest.push(
      'license = "MIT"',
      'min_platform_version = "0.1.0"',
      '',
      '[dependencies]',
      ...deps.map((d) => `${d} = "*"`),
      '',
    );
    await writeFile(join(dir, 'package.toml'), manifest.join('\n'));
    await writeFile(join(dir, 'payload', file), text);
    return dir;
  }

  it('hydrates the arguments the model writes: the tool gets the real value, the model sees it tokenised again', async () => {
    root = await mkdtemp(join(tmpdir(), 'ap-gateway-tools-'));
    const tools = await startFakeOpenAiServer({
      // Round 1: ask the echo tool about the email token it was shown; round 2: repeat the tool's answer.
      fallback: (request) => {
        const messages = request.body.messages as Array<{ role: string; content: string }>;
        const tool = messages.find((m) => m.role === 'tool');
        if (tool !== undefined) return { text: `The tool said: ${tool.content}` };
        const token = /\[\[PII:EMAIL:[0-9a-f]{4}\]\]/.exec(messages.at(-1)!.content)?.[0] ?? 'none';
        return { tool_calls: [{ id: 'c1', name: 'echo', arguments: { message: token } }] };
      },
    });
    try {
      api = await startPlatformTestApi({
        config: {
          providers: [{ id: 'oa', kind: 'openai', base_url: tools.url, models: ['m'] }],
          models: { default: 'oa/m' },
        },
      });
      const server = await writeIntegrationPackage(root, {
        name: 'test-server',
        payload: { file: 'mcp.json', data: stdioServerPayload() },
      });
      expect((await api.request('POST', '/integrations/install', { body: { name: server } })).status).toBe(
        201,
      );
      expect((await api.request('POST', '/integrations/test-server/connect')).status).toBe(200);
      await pkg('notes', 'skill', 'SKILL.md', '---\ndescription: Notes.\n---\nKeep notes.\n');
      await pkg(
        'crm',
        'competency',
        'COMPETENCY.md',
        '---\ndescription: CRM.\nskills: [notes]\nintegrations: [test-server]\n---\nUse the CRM.\n',
        ['notes'],
      );
      const agentDir = await pkg(
        'crm-user',
        'agent-template',
        'AGENT.md',
        '---\ndescription: Uses the CRM.\ncompetencies: [crm]\nallow_integration_tools: [echo]\n---\nYou look customers up.\n',
        ['crm'],
      );
      const installed = await api.request('POST', '/catalog/install', {
        body: { path: agentDir, activate: true },
      });
      expect(installed.status, JSON.stringify(installed.body)).toBe(201);
      const agentId = installed.body.installed.at(-1).id;

      const res = await api.request('POST', `/agents/${agentId}/send`, {
        body: { message: 'Look up john.smith@example.com please' },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.content).toBe('The tool said: john.smith@example.com');
      expect(res.body.tool_calls).toEqual([expect.objectContaining({ tool_name: 'echo', success: true })]);
      // The tool was called with the value: its audited argument hash is that of the real email.
      const trail = await api.request('GET', '/security/audit?category=tools&limit=10');
      expect(trail.body.entries[0].metadata.args_hash).toBe(argsHash({ message: 'john.smith@example.com' }));
      // Neither round gave the model the value; the tool's answer came back to it as the same token.
      const all = JSON.stringify(tools.requests.map((r) => r.body));
      expect(all).not.toContain('john.smith@example.com');
      const token = /\[\[PII:EMAIL:[0-9a-f]{4}\]\]/.exec(tools.requests[0]!.body.messages.at(-1).content)![0];
      expect(tools.requests[1]!.body.messages.find((m: { role: string }) => m.role === 'tool').content).toBe(
        token,
      );
    } finally {
      await tools.close();
    }
  });
});
