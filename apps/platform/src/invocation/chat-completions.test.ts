import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { insertAgent, parseEventStream, startPlatformTestApi, type PlatformTestApi } from '../testing/platform-test-api.ts';

// POST /chat/completions with the official OpenAI client: an agent (by name or id) as the model.
let api: PlatformTestApi | null = null;
afterEach(async () => {
  await api?.close();
  api = null;
});

async function start(): Promise<{ client: OpenAI; agentName: string; agentId: string }> {
  api = await startPlatformTestApi({ config: { auth: { mode: 'local' } } });
  const agent = await insertAgent(api, { name: 'claims-intake' });
  const client = new OpenAI({ baseURL: api.url, apiKey: await api.issueKey('service'), maxRetries: 0 });
  return { client, agentName: agent.name, agentId: agent.id };
}

describe('POST /chat/completions', () => {
  it('answers a chat completion from the agent named as the model', async () => {
    const { client, agentName } = await start();
    const completion = await client.chat.completions.create({
      model: agentName,
      messages: [
        { role: 'system', content: 'ignored: the agent has its own prompt' },
        { role: 'user', content: 'My windscreen cracked' },
      ],
    });
    expect(completion).toMatchObject({
      object: 'chat.completion',
      model: agentName,
      choices: [{ index: 0, message: { role: 'assistant', content: 'My windscreen cracked' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 6, completion_tokens: 6, total_tokens: 12 },
    });
    expect(completion.id).toMatch(/^chatcmpl-/);
  });

  it('streams chunks whose deltas join to the reply, then usage and [DONE]', async () => {
    const { client, agentId } = await start();
    const message = 'Please register a new claim for policy P-77';
    const stream = await client.chat.completions.create({ model: agentId, messages: [{ role: 'user', content: message }], stream: true });
    const deltas: string[] = [];
    let finish: string | null = null;
    let usage: unknown = null;
    for await (const chunk of stream) {
      expect(chunk.object).toBe('chat.completion.chunk');
      const choice = chunk.choices[0];
      if (choice?.delta.content) deltas.push(choice.delta.content);
      if (choice?.finish_reason) finish = choice.finish_reason;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(message);
    expect(finish).toBe('stop');
    expect(usage).toEqual({ prompt_tokens: 11, completion_tokens: 11, total_tokens: 22 });

    const raw = await api!.request('POST', '/chat/completions', {
      token: await api!.issueKey('service'),
      body: { model: agentId, messages: [{ role: 'user', content: 'hi there' }], stream: true },
    });
    expect(parseEventStream(raw.body as string).at(-1)?.data).toBe('[DONE]');
  });

  it('keeps the platform error envelope: an unknown agent is 404, no user message is 400', async () => {
    const { client, agentName } = await start();
    const unknown = await client.chat.completions.create({ model: 'nobody', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect((unknown as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({ category: 'NotFound' });
    const noUser = await client.chat.completions.create({ model: agentName, messages: [{ role: 'system', content: 'x' }] }).catch((e: unknown) => e);
    expect(noUser).toBeInstanceOf(OpenAI.BadRequestError);
  });

  it('is refused to roles without AgentInvoke', async () => {
    const { agentName } = await start();
    const viewer = new OpenAI({ baseURL: api!.url, apiKey: await api!.issueKey('viewer'), maxRetries: 0 });
    const refused = await viewer.chat.completions.create({ model: agentName, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.PermissionDeniedError);
  });
});

describe('the /v1 routes (baseURL http://host:port/v1, as OpenAI clients are configured)', () => {
  async function startV1() {
    api = await startPlatformTestApi({ config: { auth: { mode: 'local' } } });
    const running = await insertAgent(api, { name: 'claims-intake' });
    const suspended = await insertAgent(api, { name: 'dormant-agent', state: 'Suspended' });
    const client = new OpenAI({ baseURL: `${api.url}/v1`, apiKey: await api.issueKey('service'), maxRetries: 0 });
    return { client, running, suspended };
  }

  it('lists the Running agents as models (models.list) and retrieves one by name or id', async () => {
    const { client, running } = await startV1();
    const models = [];
    for await (const model of client.models.list()) models.push(model);
    expect(models).toEqual([{ id: 'claims-intake', object: 'model', created: Math.floor(Date.parse(running.created_at) / 1000), owned_by: 'agent-platform' }]);
    expect(await client.models.retrieve('claims-intake')).toMatchObject({ id: 'claims-intake', object: 'model' });
    expect(await client.models.retrieve(running.id)).toMatchObject({ id: 'claims-intake' });
    const dormant = await client.models.retrieve('dormant-agent').catch((e: unknown) => e);
    expect(dormant).toBeInstanceOf(OpenAI.NotFoundError);
    const missing = await client.models.retrieve('nobody').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect((missing as InstanceType<typeof OpenAI.NotFoundError>).message).toContain('nobody');
  });

  it('answers chat completions, streamed or not, and reports errors as the SDK error classes', async () => {
    const { client } = await startV1();
    const completion = await client.chat.completions.create({ model: 'claims-intake', messages: [{ role: 'user', content: 'Hail on the roof' }] });
    expect(completion.choices[0]?.message.content).toBe('Hail on the roof');
    const stream = await client.chat.completions.create({ model: 'claims-intake', messages: [{ role: 'user', content: 'A tree fell on the car' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('A tree fell on the car');
    const suspended = await client.chat.completions.create({ model: 'dormant-agent', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    // spec §Errors: InvalidState is HTTP 500, so the SDK raises InternalServerError (and retries it unless maxRetries is 0).
    expect(suspended).toBeInstanceOf(OpenAI.InternalServerError);
    expect((suspended as InstanceType<typeof OpenAI.APIError>).message).toMatch(/Suspended; activate it first/);
    const badRequest = await client.chat.completions.create({ model: 'claims-intake', messages: [] }).catch((e: unknown) => e);
    expect(badRequest).toBeInstanceOf(OpenAI.BadRequestError);
    expect((badRequest as InstanceType<typeof OpenAI.BadRequestError>).message).toMatch(/messages/);
  });

  it('refuses the model list without a key and to roles without AgentInvoke', async () => {
    const { running } = await startV1();
    expect(running.state).toBe('Running');
    const anonymous = await api!.request('GET', '/v1/models');
    expect(anonymous.status).toBe(401);
    const viewer = new OpenAI({ baseURL: `${api!.url}/v1`, apiKey: await api!.issueKey('viewer'), maxRetries: 0 });
    expect(await viewer.models.list().catch((e: unknown) => e)).toBeInstanceOf(OpenAI.PermissionDeniedError);
  });
});
