import { startOtlpCollector, waitUntil, type OtlpCollector } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inSpan, injectTraceContext, tracingEnabled, withCorrelation, withTraceContext } from '../tracing.ts';
import { startTelemetry, type Telemetry } from './start-telemetry.ts';

// The SDK as a process starts it when `[telemetry] otlp_endpoint` is set, exporting OTLP/HTTP
// JSON to a collector in this test (registering it is global; shutdown releases it for the next file).
describe('startTelemetry', () => {
  let collector: OtlpCollector;
  let telemetry: Telemetry;
  const reports: string[] = [];

  beforeAll(async () => {
    collector = await startOtlpCollector();
    telemetry = startTelemetry({
      endpoint: collector.url,
      serviceName: 'unit',
      serviceVersion: '9.9.9',
      samplingRatio: 1,
      headers: { 'x-collector-token': 'secret-token' },
      exportIntervalMs: 50,
      onExportError: (message) => reports.push(message),
    });
  });
  afterAll(async () => {
    await telemetry.shutdown();
    await collector.close();
  });

  it('exports nested spans with the service name and the correlation id on every span under withCorrelation', async () => {
    expect(tracingEnabled()).toBe(true);
    await inSpan('outer', { role: 'server', attributes: { 'a.b': 'x', skipped: undefined } }, () =>
      withCorrelation('corr-1', () =>
        inSpan('inner', { role: 'client' }, async (span) => span.setAttributes({ n: 3 })),
      ),
    );
    await waitUntil(() => collector.spans.length >= 2, { message: 'two spans exported' });
    const outer = collector.spans.find((s) => s.name === 'outer')!;
    const inner = collector.spans.find((s) => s.name === 'inner')!;
    expect(inner).toMatchObject({
      traceId: outer.traceId,
      parentSpanId: outer.spanId,
      service: 'unit',
      kind: 3,
      attributes: { correlation_id: 'corr-1', n: 3 },
    });
    expect(outer).toMatchObject({ kind: 2, attributes: { 'a.b': 'x', correlation_id: 'corr-1' } });
    expect(outer.attributes).not.toHaveProperty('skipped');
  });

  it('carries the context through a carrier, as a bus message does, correlation id included', async () => {
    const carrier = await inSpan('producer', {}, async () =>
      withCorrelation('corr-2', () => injectTraceContext()),
    );
    expect(carrier).toMatchObject({
      traceparent: expect.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/),
      baggage: 'correlation_id=corr-2',
    });
    await withTraceContext(carrier, () => inSpan('consumer', { role: 'consumer' }, async () => undefined));
    // A message without a carrier starts its own trace.
    await inSpan('unrelated', {}, () =>
      withTraceContext(undefined, () => inSpan('fresh', {}, async () => undefined)),
    );
    await waitUntil(
      () =>
        ['producer', 'consumer', 'fresh', 'unrelated'].every((n) =>
          collector.spans.some((s) => s.name === n),
        ),
      { message: 'the spans' },
    );
    const producer = collector.spans.find((s) => s.name === 'producer')!;
    expect(collector.spans.find((s) => s.name === 'consumer')).toMatchObject({
      traceId: producer.traceId,
      parentSpanId: producer.spanId,
      attributes: { correlation_id: 'corr-2' },
    });
    const fresh = collector.spans.find((s) => s.name === 'fresh')!;
    expect(fresh.parentSpanId).toBe('');
    expect(fresh.traceId).not.toBe(collector.spans.find((s) => s.name === 'unrelated')!.traceId);
  });

  it('marks a failed span with the error category, never its message', async () => {
    const error = Object.assign(new Error('the customer said: my card is 4111-1111-1111-1111'), {
      category: 'ProviderError',
    });
    await expect(inSpan('failing', {}, async () => Promise.reject(error))).rejects.toBe(error);
    await waitUntil(() => collector.spans.some((s) => s.name === 'failing'), { message: 'the failed span' });
    const failing = collector.spans.find((s) => s.name === 'failing')!;
    expect(failing).toMatchObject({ status: 2, attributes: { 'error.type': 'ProviderError' } });
    // The whole text, not a fragment: ids are random hex and may hold any four digits.
    expect(JSON.stringify(failing)).not.toContain('my card is');
    expect(JSON.stringify(failing)).not.toContain('4111-1111');
  });

  it(
    'survives a collector that refuses exports, reporting it, and exports again once it accepts',
    { timeout: 30_000 },
    async () => {
      collector.failing(true);
      const before = collector.spans.length;
      await inSpan('lost', {}, async () => undefined);
      // 503 is retryable: the exporter tries again within its 5 s export timeout, then gives the batch up.
      await waitUntil(() => reports.length > 0, {
        timeoutMs: 15_000,
        message: 'the export failure to be reported',
      });
      expect(reports[0]).toMatch(/^span export failed/);
      expect(reports.join('\n')).not.toContain('secret-token');
      collector.failing(false);
      await inSpan('after', {}, async () => undefined);
      await waitUntil(() => collector.spans.some((s) => s.name === 'after'), { message: 'the next export' });
      expect(collector.spans.slice(before).some((s) => s.name === 'lost')).toBe(false);
    },
  );
});

describe('startTelemetry after a shutdown in the same process', () => {
  it('registers again and exports to the new collector; the stopped one gets nothing more', async () => {
    const first = await startOtlpCollector();
    const second = await startOtlpCollector();
    const options = { serviceName: 'unit', samplingRatio: 1, headers: {}, exportIntervalMs: 50, onExportError: () => undefined };
    try {
      const one = startTelemetry({ ...options, endpoint: first.url });
      await inSpan('before-restart', {}, async () => undefined);
      await one.shutdown();
      expect(tracingEnabled()).toBe(false);
      expect(first.spans.map((s) => s.name)).toEqual(['before-restart']);

      const two = startTelemetry({ ...options, endpoint: second.url, serviceName: 'unit-2' });
      await inSpan('after-restart', {}, async () => undefined);
      await waitUntil(() => second.spans.length >= 1, { message: 'the span of the second registration' });
      await two.shutdown();
      expect(second.spans).toMatchObject([{ name: 'after-restart', service: 'unit-2' }]);
      expect(first.spans.map((s) => s.name)).toEqual(['before-restart']);
    } finally {
      await first.close();
      await second.close();
    }
  });
});
