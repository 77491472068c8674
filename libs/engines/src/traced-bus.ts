import type { Bus, MessageHeaders, RequestHandler, StreamHandler } from '@agent-platform/bus';
import { inSpan, injectTraceContext, withTraceContext } from '@agent-platform/observability';

/**
 * The bus with tracing (docs/observability.md "Propagation"): every request and stream message
 * carries the sender's W3C trace context as message headers, and every handler runs in a span
 * continuing it, so one trace follows a request from the api node over NATS to the worker and on
 * to the steps, events and replies it publishes. Installed by `openEngines` only while tracing is
 * on; notifications (heartbeats, streamed tokens, cache invalidations) are passed through as they are.
 */
export function traceBus(bus: Bus): Bus {
  return {
    request: (subject, payload, options) =>
      inSpan(`send ${subjectTemplate(subject)}`, { role: 'client', attributes: messaging(subject) }, () =>
        bus.request(subject, payload, { ...options, headers: withContext(options.headers) }),
      ),
    serve: <Req, Res>(
      subject: string,
      handler: RequestHandler<Req, Res>,
      options?: Parameters<Bus['serve']>[2],
    ) =>
      bus.serve<Req, Res>(
        subject,
        (payload, context) =>
          withTraceContext(context.headers, () =>
            inSpan(
              `process ${subjectTemplate(context.subject)}`,
              { role: 'server', attributes: messaging(context.subject) },
              () => handler(payload, context),
            ),
          ),
        options,
      ),
    publish: (stream, envelope, options) =>
      inSpan(
        `publish ${stream}`,
        { role: 'producer', attributes: { ...messaging(stream), 'messaging.message.id': envelope.id } },
        () => bus.publish(stream, envelope, { ...options, headers: withContext(options?.headers) }),
      ),
    consume: <T>(stream: string, options: Parameters<Bus['consume']>[1], handler: StreamHandler<T>) =>
      bus.consume<T>(stream, options, (envelope, delivery) =>
        withTraceContext(delivery.headers, () =>
          inSpan(
            `process ${stream}`,
            {
              role: 'consumer',
              attributes: {
                ...messaging(stream),
                'messaging.consumer.group.name': options.durable,
                'messaging.message.id': envelope.id,
                'messaging.delivery.attempt': envelope.attempt,
              },
            },
            () => handler(envelope, delivery),
          ),
        ),
      ),
    notify: (subject, payload) => bus.notify(subject, payload),
    listen: (subject, handler) => bus.listen(subject, handler),
    maxPayloadBytes: () => bus.maxPayloadBytes(),
    health: () => bus.health(),
    close: () => bus.close(),
  };
}

function withContext(headers: MessageHeaders | undefined): MessageHeaders | undefined {
  const trace = injectTraceContext();
  return trace === undefined ? headers : { ...headers, ...trace };
}

function messaging(destination: string): Record<string, string> {
  return {
    'messaging.system': 'agent-platform-bus',
    'messaging.destination.name': subjectTemplate(destination),
  };
}

/**
 * A subject as a span name may show it: tokens that are ids (UUIDs, hex, numbers) become `*`, so
 * `channels.send.<channel id>` does not make one span name per channel.
 */
export function subjectTemplate(subject: string): string {
  return subject
    .split('.')
    .map((token) => (/^[0-9a-f]{8}-[0-9a-f]{4}-|^[0-9a-f]{16,}$|^\d+$/i.test(token) ? '*' : token))
    .join('.');
}
