import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  startFakeOpenAiServer,
  startOtlpCollector,
  traceTree,
  waitUntil,
  type FakeOpenAiServer,
  type OtlpCollector,
} from '@agent-platform/testkit';
import { requireStarlark } from '@agent-platform/starlark/testing';
import { stringify } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeLicence } from '../support/fleet.ts';
import { call, startPlatform, type PlatformProcess } from '../support/platform-process.ts';
import { PAYOUT_PROMPT, payoutModel, spanNamed, writeTracedPackages } from '../support/traced-agent.ts';

// Issue 14 item 3 in one process (the all-in-one, `npm start`): with [telemetry] otlp_endpoint
// set, one request is one trace from the HTTP span over the embedded bus to the worker's
// invocation, its model calls and its tool call, every span carrying the correlation id, exported
// to an OTLP collector (a real HTTP server decoding OTLP/JSON, in this process).
const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
// The agent's tool is a starlark skill (tests/support/traced-agent.ts): no interpreter, no agent.
const starlark = requireStarlark('the all-in-one tracing tests (their agent calls a starlark skill)');

describe.skipIf(!starlark)('tracing in the all-in-one platform', () => {
  let dir: string;
  let model: FakeOpenAiServer;
  let collector: OtlpCollector;
  let platform: PlatformProcess;
  let base: string;
  let agent: string;
  let workflow: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ap-tracing-'));
    [model, collector] = await Promise.all([
      startFakeOpenAiServer({ fallback: payoutModel }),
      startOtlpCollector(),
    ]);
    const config = {
      // Port 0: the platform prints the address it bound (a port picked free beforehand can be taken by then).
      server: { listen: '127.0.0.1:0' },
      storage: { data_dir: join(dir, 'data') },
      licence: await writeLicence(dir, {}),
      providers: [{ id: 'fake', kind: 'openai', base_url: model.url, models: ['m'] }],
      models: { default: 'fake/m' },
      logging: { level: 'warn' },
      telemetry: { otlp_endpoint: collector.url, export_interval_ms: 100 },
    };
    await writeFile(join(dir, 'agent-platform.toml'), stringify(config));
    platform = startPlatform(dir, ['--config', join(dir, 'agent-platform.toml')]);
    base = await platform.listening();
    const packages = await writeTracedPackages(dir);
    for (const path of [packages.competency, packages.agent]) {
      const installed = await call(base, 'POST', '/catalog/install', { body: { path, activate: true } });
      expect(installed.status, JSON.stringify(installed.body)).toBe(201);
    }
    agent = (await call(base, 'GET', '/agents')).body.agents.find(
      (a: { name: string }) => a.name === 'adjuster',
    ).id;
    const installed = await call(base, 'POST', '/catalog/install', { body: { path: packages.workflow } });
    expect(installed.status, JSON.stringify(installed.body)).toBe(201);
    workflow = installed.body.installed.at(-1).id;
  }, 120_000);

  afterAll(async () => {
    platform?.kill();
    await Promise.all([model?.close(), collector?.close()]);
    await rm(dir, { recursive: true, force: true });
  });

  it("follows a send from the caller's traceparent through the bus to the invocation, the model calls and the tool call", async () => {
    const sent = await fetch(`${base}/agents/${agent}/send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: `00-${CLIENT_TRACE}-00f067aa0ba902b7-01` },
      body: JSON.stringify({ message: PAYOUT_PROMPT }),
    });
    const reply = (await sent.json()) as { tool_calls: unknown };
    expect(sent.status, JSON.stringify(reply)).toBe(200);
    expect(reply.tool_calls).toMatchObject([{ tool_name: 'claim_payout', success: true }]);
    // `send` takes the request id as the invocation's correlation id; the caller sees it as X-Request-Id.
    const requestId = sent.headers.get('x-request-id');
    expect(requestId).toEqual(expect.any(String));

    const names = (): string[] =>
      collector.spans.filter((s) => s.traceId === CLIENT_TRACE).map((s) => s.name);
    await waitUntil(
      () =>
        names().includes('POST /agents/:id/send') &&
        names().includes('execute_tool claim_payout') &&
        names().filter((n) => n === 'chat m').length === 2,
      {
        timeoutMs: 15_000,
        message: 'the spans of the send',
      },
    );
    const tree = traceTree(collector.spans, CLIENT_TRACE);
    const http = spanNamed(tree.spans, 'POST /agents/:id/send');
    const send = spanNamed(tree.spans, 'send agents.invoke');
    const process = spanNamed(tree.spans, 'process agents.invoke');
    const invocation = spanNamed(tree.spans, 'invoke_agent');
    const chats = tree.spans.filter((s) => s.name === 'chat m');
    const tool = spanNamed(tree.spans, 'execute_tool claim_payout');

    // The caller's span is the HTTP span's parent: the platform continued the client's trace.
    expect(http).toMatchObject({ parentSpanId: '00f067aa0ba902b7', kind: 2, service: 'platform' });
    expect(http.attributes).toMatchObject({
      'http.route': '/agents/:id/send',
      'http.response.status_code': 200,
      'http.request.method': 'POST',
    });
    expect(tree.parentOf(send)).toBe(http);
    expect(tree.parentOf(process)).toBe(send);
    expect(tree.parentOf(invocation)).toBe(process);
    expect(invocation.attributes).toMatchObject({
      'gen_ai.agent.id': agent,
      'invocation.source': 'Api',
      'invocation.outcome': 'completed',
    });
    // Two model calls (the tool request, then the answer) and the tool between them, all under the invocation.
    expect(chats).toHaveLength(2);
    for (const chat of chats) {
      expect(tree.ancestors(chat)).toContain(invocation);
      expect(chat.kind).toBe(3);
      expect(chat.attributes).toMatchObject({
        'gen_ai.provider.name': 'fake',
        'gen_ai.request.model': 'm',
        'gen_ai.usage.input_tokens': expect.any(Number),
      });
    }
    expect(tree.ancestors(tool)).toContain(invocation);
    expect(tool.attributes).toMatchObject({
      'gen_ai.tool.name': 'claim_payout',
      'tool.skill_id': 'premium-calc',
    });

    // One correlation id on every span of the request: the request id the caller got back.
    for (const span of [http, send, process, invocation, ...chats, tool])
      expect(span.attributes.correlation_id, span.name).toBe(requestId);
    // Never the message, the tool arguments or the reply.
    const everything = JSON.stringify(tree.spans);
    for (const secret of ['8000 loss', 'We pay 5000', 'deductible']) expect(everything).not.toContain(secret);
  });

  it("puts an invoke's own correlation_id on its spans", async () => {
    const res = await call(base, 'POST', `/agents/${agent}/invoke`, {
      body: { source: 'Api', message: 'hello', correlation_id: 'corr-invoke-1' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    await waitUntil(
      () =>
        collector.spans.some((s) => s.name === 'chat m' && s.attributes.correlation_id === 'corr-invoke-1'),
      {
        timeoutMs: 15_000,
        message: 'the model span of the invoke',
      },
    );
    const chat = collector.spans.find(
      (s) => s.name === 'chat m' && s.attributes.correlation_id === 'corr-invoke-1',
    )!;
    // The HTTP span ends after the answer is written: it may come in a later export.
    await waitUntil(
      () =>
        traceTree(collector.spans, chat.traceId).spans.some((s) => s.kind === 2 && s.name.startsWith('POST')),
      { timeoutMs: 15_000, message: 'the HTTP span' },
    );
    const tree = traceTree(collector.spans, chat.traceId);
    const http = spanNamed(tree.spans, 'POST /agents/:id/invoke');
    expect(http.attributes.correlation_id).toBe('corr-invoke-1');
    expect(spanNamed(tree.spans, 'invoke_agent').attributes.correlation_id).toBe('corr-invoke-1');
  });

  it("continues the trace of a workflow run over the workflow.steps stream to the step's invocation", async () => {
    const started = await call(base, 'POST', `/workflows/${workflow}/run`, {
      body: { input: 'hello from a run' },
    });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const runId: string = started.body.id ?? started.body.run_id;
    await waitUntil(
      () =>
        collector.spans.some(
          (s) => s.name === 'workflow.step' && s.attributes['workflow.run.id'] === runId,
        ) && collector.spans.some((s) => s.name === 'POST /workflows/:id/run'),
      {
        timeoutMs: 15_000,
        message: 'the step span of the run',
      },
    );
    const step = collector.spans.find(
      (s) => s.name === 'workflow.step' && s.attributes['workflow.run.id'] === runId,
    )!;
    await waitUntil(() => traceTree(collector.spans, step.traceId).spans.some((s) => s.name === 'chat m'), {
      timeoutMs: 15_000,
      message: "the step's model call",
    });
    const tree = traceTree(collector.spans, step.traceId);
    const http = spanNamed(tree.spans, 'POST /workflows/:id/run');
    expect(tree.ancestors(step)).toContain(http);
    expect(tree.ancestors(spanNamed(tree.spans, 'process workflow.steps'))).toContain(
      spanNamed(tree.spans, 'publish workflow.steps'),
    );
    const invocation = spanNamed(tree.spans, 'invoke_agent');
    expect(tree.ancestors(invocation)).toContain(step);
    expect(invocation.attributes).toMatchObject({ 'invocation.source': 'Workflow', correlation_id: runId });
    expect(step.attributes).toMatchObject({
      'workflow.step.mode': 'Sequential',
      'workflow.step.outcome': 'succeeded',
    });
  });
});
