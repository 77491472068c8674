import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  freePort,
  requireBinary,
  startFakeOpenAiServer,
  startWebhookReceiver,
  waitUntil,
  type FakeOpenAiServer,
  type WebhookReceiver,
} from '@agent-platform/testkit';
import { requireStarlark } from '@agent-platform/starlark/testing';
import { parse, stringify } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, startFleet, writeLicence, type AppProcess, type Fleet } from '../support/fleet.ts';
import { call, startPlatform, type PlatformProcess } from '../support/platform-process.ts';
import { monitoringExpressions } from '../support/monitoring.ts';
import { declares, metricNamesIn, promtoolCheckMetrics, sampleValue } from '../support/promtool.ts';
import { PAYOUT_PROMPT, payoutModel, writeTracedPackages } from '../support/traced-agent.ts';

// Issue 14 item 4: `/metrics` of a live platform passes `promtool check metrics` (Debian's
// `prometheus` package; the suite fails under CI=true without it), and the platform's own counters
// move with the traffic: invocations, model and tool calls, a workflow run and its step, a
// schedule fire, a webhook delivery, the licence budget. In a fleet each metric lives in the
// process doing the work, and each process is scraped on its own `[telemetry] metrics_listen`.
const promtool = requireBinary('promtool');
const natsBinary = requireBinary('nats-server');
const redisBinary = requireBinary('redis-server');
// The counted send calls a starlark skill's tool (tests/support/traced-agent.ts).
const starlark = requireStarlark(
  'the metrics tests that count a tool call (their agent calls a starlark skill)',
);

async function scrape(url: string, token?: string): Promise<string> {
  const res = await fetch(url, { headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });
  expect(res.status, url).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/plain; version=0.0.4');
  return res.text();
}

const soon = (): string => new Date(Math.ceil((Date.now() + 2_000) / 1000) * 1000).toISOString();

describe.skipIf(promtool === null)('metrics of the all-in-one platform', () => {
  let dir: string;
  let model: FakeOpenAiServer;
  let receiver: WebhookReceiver;
  let platform: PlatformProcess;
  let base: string;
  let metricsUrl: string;
  let token: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ap-metrics-'));
    [model, receiver] = await Promise.all([
      startFakeOpenAiServer({ fallback: payoutModel }),
      startWebhookReceiver(),
    ]);
    const metricsPort = await freePort();
    const config = {
      // Port 0: the platform prints the address it bound (a port picked free beforehand can be taken by then).
      server: { listen: '127.0.0.1:0' },
      storage: { data_dir: join(dir, 'data') },
      auth: { mode: 'local' },
      network: { allow_private_targets: true },
      licence: await writeLicence(dir, { transaction_budgets: { claims: 10 } }),
      providers: [{ id: 'fake', kind: 'openai', base_url: model.url, models: ['m'] }],
      models: { default: 'fake/m' },
      logging: { level: 'warn' },
      telemetry: { metrics_listen: `127.0.0.1:${metricsPort}` },
    };
    await writeFile(join(dir, 'agent-platform.toml'), stringify(config));
    platform = startPlatform(dir, ['--config', join(dir, 'agent-platform.toml')]);
    base = await platform.listening();
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    expect(platform.output()).toContain(`(metrics on ${metricsUrl})`);
    token = (await call(base, 'POST', '/auth/keys', { body: { name: 'admin', role: 'admin' } })).body.secret;
  }, 120_000);

  afterAll(async () => {
    platform?.kill();
    await Promise.all([model?.close(), receiver?.close()]);
    await rm(dir, { recursive: true, force: true });
  });

  it.skipIf(!starlark)(
    'passes promtool on a live /metrics and counts a send, an invoke, a workflow run, a schedule fire and a webhook delivery',
    async () => {
      const packages = await writeTracedPackages(dir);
      for (const path of [packages.competency, packages.agent])
        expect(
          (await call(base, 'POST', '/catalog/install', { token, body: { path, activate: true } })).status,
        ).toBe(201);
      const installed = await call(base, 'POST', '/catalog/install', {
        token,
        body: { path: packages.workflow },
      });
      expect(installed.status, JSON.stringify(installed.body)).toBe(201);
      const workflow: string = installed.body.installed.at(-1).id;
      const agent: string = (await call(base, 'GET', '/agents', { token })).body.agents.find(
        (a: { name: string }) => a.name === 'adjuster',
      ).id;
      expect(
        (
          await call(base, 'POST', '/webhooks', {
            token,
            body: { agent_id: agent, url: `${receiver.url}/hook` },
          })
        ).status,
      ).toBe(201);

      expect(
        (await call(base, 'POST', `/agents/${agent}/send`, { token, body: { message: PAYOUT_PROMPT } }))
          .status,
      ).toBe(200);
      const invoked = await call(base, 'POST', `/agents/${agent}/invoke`, {
        token,
        body: { source: 'Api', message: 'claim 1', correlation_id: 'c-1', workflow_type: 'claims' },
      });
      expect(invoked.status, JSON.stringify(invoked.body)).toBe(200);
      const run = await call(base, 'POST', `/workflows/${workflow}/run`, { token, body: { input: 'a run' } });
      expect(run.status, JSON.stringify(run.body)).toBe(201);
      const fire = await call(base, 'POST', '/cron/jobs', {
        token,
        body: { agent_id: agent, at: soon(), prompt: 'scheduled' },
      });
      expect(fire.status, JSON.stringify(fire.body)).toBe(201);

      let text = '';
      await waitUntil(
        async () => {
          text = await scrape(metricsUrl);
          return (
            sampleValue(text, 'schedule_fires_total', { outcome: 'fired' }) === 1 &&
            sampleValue(text, 'workflow_runs_finished_total', { status: 'Completed' }) === 1 &&
            sampleValue(text, 'webhook_deliveries_total', { outcome: 'delivered' }) >= 3
          );
        },
        { timeoutMs: 20_000, message: 'the fire, the run and the deliveries to be counted' },
      );
      expect(promtoolCheckMetrics(promtool!, text)).toBe('');
      // The api's own /metrics (authenticated, spec §Endpoints) is the same registry, and lints too.
      expect((await fetch(`${base}/metrics`)).status).toBe(401);
      const viaApi = await scrape(`${base}/metrics`, token);
      expect(promtoolCheckMetrics(promtool!, viaApi)).toBe('');
      expect(sampleValue(viaApi, 'invocations_total', { source: 'Api', outcome: 'completed' })).toBe(2);

      expect(sampleValue(text, 'invocations_total', { source: 'Api', outcome: 'completed' })).toBe(2);
      expect(sampleValue(text, 'invocations_total', { source: 'Workflow', outcome: 'completed' })).toBe(1);
      expect(sampleValue(text, 'invocations_total', { source: 'Cron', outcome: 'completed' })).toBe(1);
      expect(
        sampleValue(text, 'invocation_duration_seconds_count', { source: 'Api', result: 'success' }),
      ).toBe(2);
      expect(sampleValue(text, 'invocation_tokens_total')).toBeGreaterThan(0);
      // The send made two model calls (tool request, answer); the invoke, the step and the fire one each.
      expect(sampleValue(text, 'model_calls_total', { provider: 'fake', outcome: 'success' })).toBe(5);
      expect(sampleValue(text, 'model_tokens_total', { provider: 'fake', type: 'input' })).toBeGreaterThan(0);
      expect(sampleValue(text, 'tool_calls_total', { outcome: 'success' })).toBe(1);
      expect(sampleValue(text, 'workflow_runs_started_total')).toBe(1);
      expect(sampleValue(text, 'workflow_steps_total', { mode: 'Sequential', outcome: 'succeeded' })).toBe(1);
      expect(sampleValue(text, 'platform_events_total', { kind: 'invocation.completed' })).toBe(4);
      expect(sampleValue(text, 'licence_transactions_used', { workflow_type: 'claims' })).toBe(1);
      expect(sampleValue(text, 'licence_transactions_budget', { workflow_type: 'claims' })).toBe(10);
      expect(sampleValue(text, 'licence_transactions_remaining', { workflow_type: 'claims' })).toBe(9);
      expect(sampleValue(text, 'licence_expiry_timestamp_seconds')).toBeGreaterThan(Date.now() / 1000);
      expect(sampleValue(text, 'http_requests_total', { route: '/agents/:id/send', status: '200' })).toBe(1);
      // Every metric the example dashboard and alert rules query (deploy/monitoring) is one the
      // all-in-one declares: they cannot drift apart from the catalogue unnoticed.
      for (const { where, expr } of monitoringExpressions())
        for (const name of metricNamesIn(expr))
          expect(declares(text, name), `${where} reads ${name}`).toBe(true);
      // promtool's known complaint about prom-client's defaults is gone, the labelled gauges stay.
      expect(text).not.toContain('nodejs_active_handles_total');
      expect(text).toContain('nodejs_active_handles{');
    },
  );

  it('serves nothing but GET /metrics on the metrics listener', async () => {
    expect((await fetch(metricsUrl.replace('/metrics', '/agents'))).status).toBe(404);
    expect((await fetch(metricsUrl, { method: 'POST' })).status).toBe(404);
  });
});

describe.skipIf(!starlark || promtool === null || natsBinary === null || redisBinary === null)(
  'metrics of a fleet, scraped process by process',
  () => {
    let fleet: Fleet;
    const extra: AppProcess[] = [];
    let workerUrl: string;
    let schedulerUrl: string;

    beforeAll(async () => {
      fleet = await startFleet({ apis: 1, workers: 0, schedulers: 0, reply: payoutModel });
      // One config per process of the host, as for api nodes: each its own metrics port.
      const start = async (app: 'agent-worker' | 'scheduler'): Promise<string> => {
        const port = await freePort();
        const document = parse(await readFile(fleet.configPath, 'utf8'));
        const path = join(fleet.dir, `${app}.toml`);
        await writeFile(path, stringify({ ...document, telemetry: { metrics_listen: `127.0.0.1:${port}` } }));
        const proc = startApp(app, path);
        extra.push(proc);
        await proc.ready();
        expect(proc.output()).toContain(`metrics on http://127.0.0.1:${port}/metrics`);
        return `http://127.0.0.1:${port}/metrics`;
      };
      [workerUrl, schedulerUrl] = await Promise.all([start('agent-worker'), start('scheduler')]);
    }, 180_000);

    afterAll(async () => {
      await Promise.all(extra.map((p) => p.kill()));
      await fleet?.close();
    });

    it('counts each piece of work in the process that did it, and every process passes promtool', async () => {
      const api = fleet.urls[0]!;
      const token: string = (
        await call(api, 'POST', '/auth/keys', { body: { name: 'admin', role: 'admin' } })
      ).body.secret;
      const packages = await writeTracedPackages(fleet.dir);
      for (const path of [packages.competency, packages.agent])
        expect(
          (await call(api, 'POST', '/catalog/install', { token, body: { path, activate: true } })).status,
        ).toBe(201);
      const agent: string = (await call(api, 'GET', '/agents', { token })).body.agents.find(
        (a: { name: string }) => a.name === 'adjuster',
      ).id;

      expect(
        (await call(api, 'POST', `/agents/${agent}/send`, { token, body: { message: PAYOUT_PROMPT } }))
          .status,
      ).toBe(200);
      expect(
        (
          await call(api, 'POST', '/cron/jobs', {
            token,
            body: { agent_id: agent, at: soon(), prompt: 'scheduled' },
          })
        ).status,
      ).toBe(201);

      let scheduler = '';
      await waitUntil(
        async () =>
          sampleValue((scheduler = await scrape(schedulerUrl)), 'schedule_fires_total', {
            outcome: 'fired',
          }) === 1,
        {
          timeoutMs: 20_000,
          message: 'the fire on the scheduler',
        },
      );
      const worker = await scrape(workerUrl);
      const apiText = await scrape(`${api}/metrics`, token);
      for (const [name, text] of [
        ['worker', worker],
        ['scheduler', scheduler],
        ['api', apiText],
      ] as const)
        expect(promtoolCheckMetrics(promtool!, text), name).toBe('');

      expect(sampleValue(worker, 'invocations_total', { source: 'Api', outcome: 'completed' })).toBe(1);
      expect(sampleValue(worker, 'invocations_total', { source: 'Cron', outcome: 'completed' })).toBe(1);
      expect(sampleValue(worker, 'model_calls_total', { provider: 'fake', outcome: 'success' })).toBe(3);
      expect(sampleValue(worker, 'tool_calls_total', { outcome: 'success' })).toBe(1);
      // The worker counts the audit entries it appends: the send's own (docs/audit.md "Who writes
      // an entry"), the privacy gateway's routing entries, the tool call's.
      expect(sampleValue(worker, 'audit_entries_total')).toBeGreaterThanOrEqual(3);
      expect(sampleValue(scheduler, 'platform_events_total', { kind: 'schedule.fired' })).toBe(1);
      // The api node ran none of it: it counts its requests, and reads the fleet's licence budget.
      expect(sampleValue(apiText, 'invocations_total')).toBe(0);
      expect(sampleValue(apiText, 'http_requests_total', { route: '/agents/:id/send', status: '200' })).toBe(
        1,
      );
      expect(sampleValue(apiText, 'licence_expiry_timestamp_seconds')).toBeGreaterThan(Date.now() / 1000);
    });
  },
);
