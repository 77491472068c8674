import { Type, type Static } from 'typebox';

/**
 * W3C trace context as text headers (`traceparent`, `tracestate`, `baggage`): carried by bus
 * messages (as message headers) and queue jobs (as the job data's `trace_context`) so the process
 * that takes the work continues the trace of the one that sent it (docs/observability.md
 * "Propagation"). Present only while tracing is on; consumers never need it to do their work.
 */
export const TraceContext = Type.Record(
  Type.String({ pattern: '^[A-Za-z0-9-]+$' }),
  Type.String({ maxLength: 8192 }),
  {
    description:
      'W3C trace context headers (traceparent, tracestate, baggage) of the producer; absent while tracing is off.',
  },
);
export type TraceContext = Static<typeof TraceContext>;

/** The job data field the queue's tracing decorator writes and removes before a handler runs. */
export const TRACE_CONTEXT_FIELD = 'trace_context';
