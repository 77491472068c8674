import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { freePort } from './free-port.ts';

/** One span as a collector received it, flattened from OTLP/HTTP JSON. */
export interface CollectedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's span kind number: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  /** `service.name` of the process that made it. */
  service: string;
  /** `service.instance.id` of that process (`<host>:<pid>`). */
  instance: string;
  attributes: Record<string, string | number | boolean>;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  status: number;
}

export interface OtlpCollector {
  /** The traces endpoint, `http://127.0.0.1:<port>/v1/traces`: what `[telemetry] otlp_endpoint` takes. */
  readonly url: string;
  readonly spans: CollectedSpan[];
  /** Export requests received (including those refused while `failing`). */
  readonly requests: number;
  /** Answer every export with 503 from now on (true) or accept again (false). */
  failing(on: boolean): void;
  /** Stops listening (a collector that is down: exports meet a refused connection). */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
};

/**
 * A tiny OpenTelemetry collector for tests (STYLE §5: a real component, not a mock): an HTTP
 * server on loopback that accepts OTLP/HTTP JSON exports (`POST /v1/traces`, gzip or not), as
 * the platform's exporter sends them, and keeps every span it received.
 */
export async function startOtlpCollector(): Promise<OtlpCollector> {
  const port = await freePort();
  const spans: CollectedSpan[] = [];
  let requests = 0;
  let failing = false;
  let server: Server | null = null;

  const listen = async (): Promise<void> => {
    const created = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        requests += 1;
        if (failing) return void res.writeHead(503).end();
        if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
        try {
          const raw = Buffer.concat(chunks);
          const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
          spans.push(...flatten(JSON.parse(body.toString('utf8')) as ExportRequest));
          res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        } catch {
          res.writeHead(400).end();
        }
      });
    });
    await new Promise<void>((resolve, reject) => {
      created.once('error', reject);
      created.listen(port, '127.0.0.1', resolve);
    });
    server = created;
  };
  const stop = async (): Promise<void> => {
    const running = server;
    server = null;
    if (running === null) return;
    await new Promise<void>((resolve) => {
      running.close(() => resolve());
      running.closeAllConnections();
    });
  };

  await listen();
  const bound = (server as Server | null)?.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound.port}/v1/traces`,
    spans,
    get requests() {
      return requests;
    },
    failing: (on) => {
      failing = on;
    },
    stop,
    restart: listen,
    close: stop,
  };
}

interface ExportRequest {
  resourceSpans?: Array<{
    resource?: { attributes?: Array<{ key: string; value: AnyValue }> };
    scopeSpans?: Array<{
      spans?: Array<{
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind?: number;
        attributes?: Array<{ key: string; value: AnyValue }>;
        status?: { code?: number };
      }>;
    }>;
  }>;
}

function flatten(request: ExportRequest): CollectedSpan[] {
  const out: CollectedSpan[] = [];
  for (const resource of request.resourceSpans ?? []) {
    const resourceAttributes = attributesOf(resource.resource?.attributes);
    const service = String(resourceAttributes['service.name'] ?? '');
    const instance = String(resourceAttributes['service.instance.id'] ?? '');
    for (const scope of resource.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        out.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ?? '',
          name: span.name,
          kind: span.kind ?? 0,
          service,
          instance,
          attributes: attributesOf(span.attributes),
          status: span.status?.code ?? 0,
        });
      }
    }
  }
  return out;
}

function attributesOf(
  list: Array<{ key: string; value: AnyValue }> | undefined,
): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? []) {
    if (value.stringValue !== undefined) out[key] = value.stringValue;
    else if (value.intValue !== undefined) out[key] = Number(value.intValue);
    else if (value.doubleValue !== undefined) out[key] = value.doubleValue;
    else if (value.boolValue !== undefined) out[key] = value.boolValue;
  }
  return out;
}

/** The spans of one trace as a tree, to assert parentage: `parentOf(span)` and `ancestors(span)`. */
export function traceTree(spans: readonly CollectedSpan[], traceId: string) {
  const inTrace = spans.filter((s) => s.traceId === traceId);
  const byId = new Map(inTrace.map((s) => [s.spanId, s]));
  const parentOf = (span: CollectedSpan): CollectedSpan | undefined => byId.get(span.parentSpanId);
  return {
    spans: inTrace,
    parentOf,
    /** From the span's parent up to the root (as far as the spans received reach). */
    ancestors(span: CollectedSpan): CollectedSpan[] {
      const chain: CollectedSpan[] = [];
      for (let at = parentOf(span); at !== undefined; at = parentOf(at)) chain.push(at);
      return chain;
    },
  };
}
