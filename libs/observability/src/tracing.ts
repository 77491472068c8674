import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Span,
} from '@opentelemetry/api';

/**
 * The platform's tracing port (docs/observability.md "Tracing"). Every span the platform makes
 * goes through these few functions, which are the only code outside `./otel` that touches
 * OpenTelemetry, and only its API package (no SDK).
 *
 * Off by default and free when off: until `startTelemetry` (the `./otel` subpath, imported only
 * when `[telemetry] otlp_endpoint` is set) registers an SDK, `enabled` is false and every function
 * here returns after one boolean test: `inSpan` calls its function directly, nothing is injected
 * into messages, no context is switched. The bus, queue and HTTP decorators are not even
 * installed then.
 *
 * Spans never carry message content, tool arguments or results, or personal data: ids, names
 * from the config (provider, model, tool), counts and outcomes only.
 */

let enabled = false;

/** True once an SDK is registered and exporting. */
export function tracingEnabled(): boolean {
  return enabled;
}

/** Called by `startTelemetry` (and its shutdown); nothing else should. */
export function setTracingEnabled(on: boolean): void {
  enabled = on;
}

/** W3C trace context as text headers: `traceparent`, `tracestate`, `baggage`. */
export type TraceCarrier = Record<string, string>;

export type SpanAttributes = Record<string, string | number | boolean | undefined>;

/** What the span stands for: OTel's span kinds, in words. */
export type SpanRole = 'internal' | 'server' | 'client' | 'producer' | 'consumer';

export interface SpanOptions {
  role?: SpanRole;
  attributes?: SpanAttributes;
}

/** The span a function runs in: it may add attributes (counts, outcomes) as it learns them. */
export interface ActiveSpan {
  setAttributes(attributes: SpanAttributes): void;
}

/** The attribute every span of a request carries (the spec's InvocationContext `correlation_id`). */
export const CORRELATION_ATTRIBUTE = 'correlation_id';

/** The baggage entry that carries the correlation id across processes. */
export const CORRELATION_BAGGAGE = 'correlation_id';

const TRACER_NAME = '@agent-platform';

const KINDS: Record<SpanRole, SpanKind> = {
  internal: SpanKind.INTERNAL,
  server: SpanKind.SERVER,
  client: SpanKind.CLIENT,
  producer: SpanKind.PRODUCER,
  consumer: SpanKind.CONSUMER,
};

const NOOP_SPAN: ActiveSpan = { setAttributes: () => undefined };

/**
 * Runs `fn` in a new span, child of the active one, and ends it when `fn` settles. A thrown error
 * marks the span failed with its category (a PlatformError's) or its name, never its message:
 * messages may quote what a user or an upstream sent.
 */
export function inSpan<T>(
  name: string,
  options: SpanOptions,
  fn: (span: ActiveSpan) => Promise<T>,
): Promise<T> {
  // Not an async function: while off, the caller gets fn's own promise, no extra one around it.
  if (!enabled) return fn(NOOP_SPAN);
  return trace
    .getTracer(TRACER_NAME)
    .startActiveSpan(
      name,
      { kind: KINDS[options.role ?? 'internal'], attributes: attributesOf(options.attributes) },
      async (span) => {
        try {
          return await fn(handleOf(span));
        } catch (error) {
          markFailed(span, error);
          throw error;
        } finally {
          span.end();
        }
      },
    );
}

/** Adds attributes to the active span, if any (a hook deep in a call that knows an outcome). */
export function annotateSpan(attributes: SpanAttributes): void {
  if (!enabled) return;
  trace.getActiveSpan()?.setAttributes(attributesOf(attributes));
}

/** The active trace context as headers for a message or a job; undefined when there is none. */
export function injectTraceContext(): TraceCarrier | undefined {
  if (!enabled) return undefined;
  const carrier: TraceCarrier = {};
  propagation.inject(context.active(), carrier);
  return Object.keys(carrier).length > 0 ? carrier : undefined;
}

/**
 * Runs `fn` in the trace context a message or job carried: its spans continue the sender's trace.
 * A message without one starts a new trace: the context of whatever delivered the message (the
 * embedded bus runs handlers from the publisher's promise chain) is never inherited by accident.
 */
export function withTraceContext<T>(carrier: Readonly<Record<string, string>> | undefined, fn: () => T): T {
  if (!enabled) return fn();
  return context.with(carrier === undefined ? ROOT_CONTEXT : propagation.extract(ROOT_CONTEXT, carrier), fn);
}

/**
 * Runs `fn` with `correlationId` as the request's correlation id: set on the active span now, and
 * on every span started inside `fn`, in this process and, through W3C baggage on the bus and the
 * queue, in the processes the work moves to.
 */
export function withCorrelation<T>(correlationId: string, fn: () => T): T {
  if (!enabled) return fn();
  trace.getActiveSpan()?.setAttribute(CORRELATION_ATTRIBUTE, correlationId);
  const active = context.active();
  const baggage = (propagation.getBaggage(active) ?? propagation.createBaggage()).setEntry(
    CORRELATION_BAGGAGE,
    { value: correlationId },
  );
  return context.with(propagation.setBaggage(active, baggage), fn);
}

/** The correlation id a context carries (the SDK's span processor copies it onto each span). */
export function correlationOf(ctx: ReturnType<typeof context.active>): string | undefined {
  return propagation.getBaggage(ctx)?.getEntry(CORRELATION_BAGGAGE)?.value;
}

/**
 * A span whose start and end are not one function call (an HTTP request: started in one hook,
 * ended in another). `run` runs a function inside it; `end` may be called more than once.
 */
export interface OpenSpan extends ActiveSpan {
  run<T>(fn: () => T): T;
  setName(name: string): void;
  fail(error: unknown): void;
  end(): void;
}

/** Starts a span under the trace context `carrier` carries (a new trace without one). */
export function openSpan(
  name: string,
  options: SpanOptions & { carrier?: Readonly<Record<string, string>> },
): OpenSpan | undefined {
  if (!enabled) return undefined;
  const parent =
    options.carrier === undefined ? ROOT_CONTEXT : propagation.extract(ROOT_CONTEXT, options.carrier);
  const span = trace
    .getTracer(TRACER_NAME)
    .startSpan(
      name,
      { kind: KINDS[options.role ?? 'internal'], attributes: attributesOf(options.attributes) },
      parent,
    );
  const ctx = trace.setSpan(parent, span);
  let ended = false;
  return {
    ...handleOf(span),
    run: (fn) => context.with(ctx, fn),
    setName: (next) => void span.updateName(next),
    fail: (error) => markFailed(span, error),
    end: () => {
      if (ended) return;
      ended = true;
      span.end();
    },
  };
}

/** Binds an event emitter (an HTTP request and response) so its listeners run in the span's context. */
export function bindToSpan<E extends object>(open: OpenSpan, emitter: E): E {
  return open.run(() => context.bind(context.active(), emitter));
}

/** The category of a PlatformError (or anything with a string `category`), else the error's name. */
export function errorType(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const category = (error as { category?: unknown }).category;
    if (typeof category === 'string') return category;
    if (error instanceof Error) return error.name;
  }
  return 'Error';
}

function markFailed(span: Span, error: unknown): void {
  const type = errorType(error);
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR, message: type });
}

function handleOf(span: Span): ActiveSpan {
  return { setAttributes: (attributes) => void span.setAttributes(attributesOf(attributes)) };
}

function attributesOf(attributes: SpanAttributes | undefined): Attributes {
  const out: Attributes = {};
  if (attributes === undefined) return out;
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) out[key] = value;
  return out;
}
