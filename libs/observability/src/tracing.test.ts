import { context, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import {
  annotateSpan,
  inSpan,
  injectTraceContext,
  openSpan,
  tracingEnabled,
  withCorrelation,
  withTraceContext,
} from './tracing.ts';

// Tracing off (no `[telemetry] otlp_endpoint`, the default): nothing is registered and every
// function of the port is a pass-through. The SDK side is tested in otel/start-telemetry.test.ts.
describe('the tracing port while tracing is off', () => {
  it('runs functions directly, injects nothing and switches no context', async () => {
    expect(tracingEnabled()).toBe(false);
    let seen: unknown;
    const result = await inSpan('x', { attributes: { a: 1 } }, async (span) => {
      span.setAttributes({ b: 2 });
      annotateSpan({ c: 3 });
      seen = trace.getActiveSpan();
      return 42;
    });
    expect(result).toBe(42);
    expect(seen).toBeUndefined();
    expect(injectTraceContext()).toBeUndefined();
    expect(openSpan('y', {})).toBeUndefined();
    const active = context.active();
    expect(
      withTraceContext({ traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' }, () =>
        context.active(),
      ),
    ).toBe(active);
    expect(withCorrelation('c-1', () => context.active())).toBe(active);
  });

  it('passes errors through unchanged', async () => {
    const error = new Error('boom');
    await expect(inSpan('x', {}, async () => Promise.reject(error))).rejects.toBe(error);
  });
});
