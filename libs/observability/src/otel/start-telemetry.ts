import { hostname } from 'node:os';
import { context, diag, DiagLogLevel, propagation, trace, type Context } from '@opentelemetry/api';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  NodeTracerProvider,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type ReadableSpan,
  type Span,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import { CORRELATION_ATTRIBUTE, correlationOf, setTracingEnabled } from '../tracing.ts';

export interface TelemetryOptions {
  /** The collector's OTLP/HTTP traces URL (`http://collector:4318/v1/traces`). */
  endpoint: string;
  /** `service.name` of every span of this process (`api`, `agent-worker`, ...). */
  serviceName: string;
  serviceVersion?: string;
  /** Share of new traces kept, 0 to 1; a continued trace follows its parent's decision. */
  samplingRatio: number;
  /** Sent with every export (an authorization header), values already read from the environment. */
  headers: Record<string, string>;
  /** Longest wait before a finished span is exported (the batch delay). */
  exportIntervalMs: number;
  /** Export failures (collector down): reported here, at most once a minute. */
  onExportError: (message: string) => void;
}

export interface Telemetry {
  /** Exports what is buffered (waiting at most a few seconds), then stops tracing. */
  shutdown(): Promise<void>;
}

/** How long a process that stops waits for its last spans to reach the collector. */
const SHUTDOWN_WAIT_MS = 3_000;
/** One export attempt; a collector that does not answer in time loses that batch, nothing else. */
const EXPORT_TIMEOUT_MS = 5_000;
const ERROR_REPORT_INTERVAL_MS = 60_000;

/**
 * Registers the OpenTelemetry SDK for this process (docs/observability.md "Tracing"): a tracer
 * provider with the process's `service.name`, W3C trace context and baggage propagation, a
 * parent-based ratio sampler, and a batch processor exporting OTLP/HTTP JSON to the collector.
 * Imported (dynamically) only when `[telemetry] otlp_endpoint` is set, so a process without it
 * never loads the SDK.
 *
 * The exporter never throws into the platform: a collector that is down or refuses costs the
 * spans of the batches it missed (logged at most once a minute), and the queue of spans waiting is
 * bounded (2048, the SDK's default), so a long outage cannot grow memory.
 */
export function startTelemetry(options: TelemetryOptions): Telemetry {
  diag.setLogger(throttled(options.onExportError), {
    logLevel: DiagLogLevel.WARN,
    suppressOverrideMessage: true,
  });
  const exporter = new OTLPTraceExporter({
    url: options.endpoint,
    headers: options.headers,
    timeoutMillis: EXPORT_TIMEOUT_MS,
  });
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({
      'service.name': options.serviceName,
      'service.instance.id': `${hostname()}:${process.pid}`,
      ...(options.serviceVersion === undefined ? {} : { 'service.version': options.serviceVersion }),
    }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(options.samplingRatio) }),
    spanProcessors: [
      correlationProcessor(),
      new BatchSpanProcessor(exporter, {
        scheduledDelayMillis: options.exportIntervalMs,
        exportTimeoutMillis: EXPORT_TIMEOUT_MS,
      }),
    ],
  });
  provider.register({
    propagator: new CompositePropagator({
      propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
    }),
  });
  setTracingEnabled(true);
  let stopping: Promise<void> | undefined;
  return {
    shutdown: () =>
      (stopping ??= (async () => {
        await Promise.race([
          provider.shutdown().catch(() => undefined),
          new Promise((resolve) => setTimeout(resolve, SHUTDOWN_WAIT_MS).unref()),
        ]);
        setTracingEnabled(false);
        // The SDK's registrations are global to the process: released, so a later
        // startTelemetry in the same process (a platform stopped and started again in one
        // process, a test file run after another) registers its own instead of being refused.
        trace.disable();
        context.disable();
        propagation.disable();
        diag.disable();
      })()),
  };
}

/** Copies the correlation id of the parent context (W3C baggage) onto every span as it starts. */
function correlationProcessor(): SpanProcessor {
  return {
    onStart(span: Span, parent: Context) {
      const id = correlationOf(parent);
      if (id !== undefined) span.setAttribute(CORRELATION_ATTRIBUTE, id);
    },
    onEnd(_span: ReadableSpan) {},
    forceFlush: async () => undefined,
    shutdown: async () => undefined,
  };
}

/**
 * The SDK reports an export failure as the error serialised to JSON, stack included: keep its
 * message (`connect ECONNREFUSED 127.0.0.1:4318`), which is what an operator acts on.
 */
function readable(item: unknown): string {
  if (item instanceof Error) return item.message;
  if (typeof item !== 'string') return '';
  try {
    const parsed = JSON.parse(item) as { message?: unknown };
    return typeof parsed.message === 'string' ? parsed.message : item;
  } catch {
    return item;
  }
}

/** The SDK's diagnostics (export failures) as one report a minute at most. */
function throttled(report: (message: string) => void) {
  let last = 0;
  let dropped = 0;
  const say = (message: string, ...args: unknown[]): void => {
    const now = Date.now();
    if (now - last < ERROR_REPORT_INTERVAL_MS) {
      dropped += 1;
      return;
    }
    const detail = [message, ...args].map(readable).filter((s) => s !== '');
    report(
      `span export failed: ${detail.join(' ')}` +
        (dropped > 0 ? ` (${dropped} similar reports suppressed)` : ''),
    );
    last = now;
    dropped = 0;
  };
  return { error: say, warn: say, info: () => undefined, debug: () => undefined, verbose: () => undefined };
}
