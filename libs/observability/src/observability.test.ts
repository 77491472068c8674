import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogBuffer } from './log-buffer.ts';
import { createLogger } from './logger.ts';
import { createMetrics, DROPPED_DEFAULT_METRICS } from './metrics.ts';
import { platformInstruments } from './platform-instruments.ts';

function capture(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

describe('createLogBuffer', () => {
  it('keeps only the newest lines, oldest first', () => {
    const buffer = createLogBuffer(3);
    buffer.write('a\n');
    buffer.write('b\nc\n');
    buffer.write('d\n');
    expect(buffer.lines()).toEqual(['b', 'c', 'd']);
    expect(buffer.tail(2)).toEqual(['c', 'd']);
    expect(buffer.tail(10)).toEqual(['b', 'c', 'd']);
  });
});

describe('createLogger', () => {
  it('writes the same JSON lines to the destination and the buffer', () => {
    const out = capture();
    const { logger, buffer } = createLogger({ level: 'info', bufferLines: 10, destination: out.stream });
    logger.info({ route: '/x' }, 'hello');
    logger.debug('not at this level');
    expect(buffer.lines()).toHaveLength(1);
    const line = JSON.parse(buffer.lines()[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({ msg: 'hello', route: '/x', level: 30 });
    expect(out.text().trim()).toBe(buffer.lines()[0]);
  });

  it('redacts credentials and bodies wherever a caller puts them', () => {
    const { logger, buffer } = createLogger({ level: 'info', bufferLines: 10, destination: 'silent' });
    logger.info(
      {
        headers: { authorization: 'Bearer svc_sk_abc' },
        key: { secret: 'svc_sk_def', name: 'ci' },
        vault: { value: 'hunter2' },
        provider: { api_key: 'sk-live', password: 'pw' },
        req: { body: { message: 'private' } },
      },
      'event',
    );
    const text = buffer.lines().join('\n');
    for (const secret of ['svc_sk_abc', 'svc_sk_def', 'hunter2', 'sk-live', '"pw"', 'private']) expect(text).not.toContain(secret);
    expect(text).toContain('"name":"ci"');
  });

  it('keeps only the configured number of lines', () => {
    const { logger, buffer } = createLogger({ level: 'info', bufferLines: 2, destination: 'silent' });
    for (const n of [1, 2, 3]) logger.info(`line ${n}`);
    expect(buffer.lines().map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual(['line 2', 'line 3']);
  });
});

describe('createMetrics', () => {
  it('exposes http and platform metrics in the text format', async () => {
    const metrics = createMetrics();
    metrics.observeHttpRequest({ method: 'GET', route: '/agents/:id', status: 200, seconds: 0.01 });
    metrics.authFailuresTotal.inc({ reason: 'invalid' });
    metrics.configReloadsTotal.inc({ result: 'success' });
    metrics.apiKeysCreatedTotal.inc();
    const text = await metrics.render();
    expect(text).toContain('http_requests_total{method="GET",route="/agents/:id",status="200"} 1');
    expect(text).toContain('http_request_duration_seconds_count{method="GET",route="/agents/:id",status="200"} 1');
    expect(text).toContain('auth_failures_total{reason="invalid"} 1');
    expect(text).toContain('config_reloads_total{result="success"} 1');
    expect(text).toContain('api_keys_created_total 1');
    expect(text).toContain('audit_entries_total 0');
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(metrics.contentType).toContain('text/plain; version=0.0.4');
  });

  it('gives each instance its own registry', async () => {
    const a = createMetrics();
    const b = createMetrics();
    a.vaultWritesTotal.inc();
    expect(await a.render()).toContain('vault_writes_total 1');
    expect(await b.render()).toContain('vault_writes_total 0');
  });

  it('returns the same counter when a service registers a name twice', async () => {
    const metrics = createMetrics();
    metrics.counter('invocations_total', 'Invocations.', ['agent']).inc({ agent: 'a' });
    metrics.counter('invocations_total', 'Invocations.', ['agent']).inc({ agent: 'a' });
    expect(await metrics.render()).toContain('invocations_total{agent="a"} 2');
  });
});

describe('metrics Prometheus accepts', () => {
  it('leaves out the default gauges named _total that promtool rejects, keeping their labelled twins', async () => {
    const text = await createMetrics().render();
    for (const name of DROPPED_DEFAULT_METRICS) expect(text).not.toContain(`${name} `);
    expect(text).toContain('# TYPE nodejs_active_handles gauge');
  });

  it('reads a gauge at each scrape, and leaves it empty when its source fails', async () => {
    const metrics = createMetrics();
    let used = 3;
    metrics.gauge('budget_used', 'Used.', ['kind'], async () => [{ labels: { kind: 'a' }, value: used }]);
    metrics.gauge('broken', 'Fails.', ['kind'], async () => Promise.reject(new Error('store down')));
    expect(await metrics.render()).toContain('budget_used{kind="a"} 3');
    used = 5;
    const text = await metrics.render();
    expect(text).toContain('budget_used{kind="a"} 5');
    expect(text).toContain('# TYPE broken gauge');
    expect(text).not.toMatch(/^broken /m);
  });
});

describe('platformInstruments', () => {
  it('counts with bounded labels: an unknown invocation source is other', async () => {
    const metrics = createMetrics();
    const instruments = platformInstruments(metrics);
    expect(platformInstruments(metrics)).toBe(instruments);
    instruments.invocation({ source: 'Api', outcome: 'completed', seconds: 0.2, tokens: 10 });
    instruments.invocation({ source: 'anything-a-caller-sent', outcome: 'ProviderError', seconds: 1, tokens: 0 });
    instruments.modelCall({ provider: 'oa', outcome: 'success', seconds: 0.1, inputTokens: 7, outputTokens: 3 });
    instruments.event('workflow.run.completed', { status: 'Completed' });
    instruments.event('channel.message.received', { kind: 'slack' });
    instruments.event('licence.budget.exhausted', {});
    const text = await metrics.render();
    expect(text).toContain('invocations_total{source="Api",outcome="completed"} 1');
    expect(text).toContain('invocations_total{source="other",outcome="ProviderError"} 1');
    expect(text).toContain('invocation_duration_seconds_count{source="other",result="failure"} 1');
    expect(text).toContain('invocation_tokens_total{source="Api"} 10');
    expect(text).toContain('model_tokens_total{provider="oa",type="input"} 7');
    expect(text).toContain('workflow_runs_finished_total{status="Completed"} 1');
    expect(text).toContain('channel_messages_total{direction="in",kind="slack",outcome="received"} 1');
    expect(text).toContain('licence_budget_crossings_total{level="exhausted"} 1');
    expect(text).toContain('platform_events_total{kind="workflow.run.completed"} 1');
  });
});
