import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseListenAddress } from '@agent-platform/config';
import type { Logger, PlatformMetrics } from '@agent-platform/observability';
import type { ProcessService } from './process-lifecycle.ts';

/** The metrics listener of a process, once started: where Prometheus scrapes it. */
export interface MetricsListener extends ProcessService {
  /** `http://host:port/metrics`, or '' before start. */
  url(): string;
}

/**
 * `[telemetry] metrics_listen` (docs/observability.md "Scraping a fleet"): a small HTTP listener
 * answering `GET /metrics` with this process's registry and 404 to anything else. It is how an
 * agent worker, a scheduler or a channel bridge (no HTTP api of their own) are scraped; on an
 * api node or the all-in-one it serves the same registry as the api's authenticated `/metrics`,
 * without authentication, for a Prometheus that holds no API key. Bind it to a private address:
 * metrics carry no secret and no customer data, but they do show what the platform is doing.
 */
export function createMetricsListener(options: {
  listen: string;
  metrics: PlatformMetrics;
  logger: Logger;
}): MetricsListener {
  let server: Server | null = null;
  let url = '';
  return {
    name: 'metrics-listener',
    url: () => url,
    async start() {
      const address = parseListenAddress(options.listen);
      const created = createServer((request, response) => {
        const path = (request.url ?? '').split('?')[0];
        if (request.method !== 'GET' || path !== '/metrics') {
          response
            .writeHead(404, { 'content-type': 'text/plain' })
            .end('not found: this listener serves GET /metrics only\n');
          return;
        }
        options.metrics.render().then(
          (text) => response.writeHead(200, { 'content-type': options.metrics.contentType }).end(text),
          (err: unknown) => {
            options.logger.error({ err }, 'rendering the metrics failed');
            response.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n');
          },
        );
      });
      await new Promise<void>((resolve, reject) => {
        created.once('error', reject);
        if (address.kind === 'unix') created.listen(address.path, resolve);
        else created.listen(address.port, address.host, resolve);
      });
      server = created;
      const bound = created.address();
      url =
        typeof bound === 'string' ? `unix:${bound}` : `http://${hostOf(bound)}:${bound?.port ?? 0}/metrics`;
      options.logger.info({ url }, 'metrics listener started');
    },
    async stop() {
      const running = server;
      server = null;
      if (running === null) return;
      await new Promise<void>((resolve) => {
        running.close(() => resolve());
        running.closeAllConnections();
      });
    },
  };
}

function hostOf(bound: AddressInfo | null): string {
  if (bound === null) return '127.0.0.1';
  return bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
}
