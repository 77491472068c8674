import { TRACE_CONTEXT_FIELD } from '@agent-platform/contracts';
import { inSpan, injectTraceContext, withTraceContext } from '@agent-platform/observability';
import type { Job, JobHandler, ProcessOptions, Queue } from '@agent-platform/queue';

/**
 * The queue with tracing (docs/observability.md "Propagation"): a job added inside a trace (a
 * webhook delivery enqueued by the fan-out, a schedule fire's retry) carries the trace context in
 * its data as `trace_context`, and its handler runs in a span continuing it, on whichever process
 * takes the job; the field is removed before the handler sees the data. Jobs of a repeating
 * scheduler (cron slots) start a trace of their own. Installed by `openEngines` only while
 * tracing is on, so with tracing off job data is exactly what the producer wrote.
 */
export function traceQueue(queue: Queue): Queue {
  return {
    add: (name, data, options) => {
      const carrier = injectTraceContext();
      const traced =
        carrier !== undefined && isPlainObject(data) ? { ...data, [TRACE_CONTEXT_FIELD]: carrier } : data;
      return queue.add(name, traced, options);
    },
    process: <T>(name: string, handler: JobHandler<T>, options?: ProcessOptions<T>) =>
      queue.process<T>(
        name,
        (job) => {
          const { carrier, data } = split(job.data);
          const attributes = {
            'messaging.system': 'agent-platform-queue',
            'messaging.destination.name': name,
            'messaging.delivery.attempt': job.attempt,
          };
          return withTraceContext(carrier, () =>
            inSpan(`process ${name}`, { role: 'consumer', attributes }, () =>
              handler({ ...job, data } as Job<T>),
            ),
          );
        },
        withoutCarrier(options),
      ),
    upsertScheduler: (name, id, repeat, data) => queue.upsertScheduler(name, id, repeat, data),
    removeScheduler: (name, id) => queue.removeScheduler(name, id),
    listSchedulers: (name) => queue.listSchedulers(name),
    health: () => queue.health(),
    close: () => queue.close(),
  };
}

/** `onLost` sees the job's data as the handler does, without the trace context. */
function withoutCarrier<T>(options: ProcessOptions<T> | undefined): ProcessOptions<T> | undefined {
  const onLost = options?.onLost;
  if (options === undefined || onLost === undefined) return options;
  return { ...options, onLost: (job, reason) => onLost({ ...job, data: split(job.data).data } as Job<T>, reason) };
}

function split(data: unknown): { carrier: Record<string, string> | undefined; data: unknown } {
  if (!isPlainObject(data) || !(TRACE_CONTEXT_FIELD in data)) return { carrier: undefined, data };
  const { [TRACE_CONTEXT_FIELD]: carrier, ...rest } = data;
  return { carrier: isStringRecord(carrier) ? carrier : undefined, data: rest };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return isPlainObject(value) && Object.values(value).every((v) => typeof v === 'string');
}
