import type { AdapterOperation, AdapterPayload } from '@agent-platform/contracts';
import {
  IDEMPOTENCY_HEADER,
  IntegrationCallError,
  type IntegrationConnection,
  type IntegrationTool,
} from '@agent-platform/domain';
import { guardedFetch } from '@agent-platform/net';
import { checkUrlTarget } from '@agent-platform/net';

export interface RestConnectOptions {
  payload: AdapterPayload;
  key: string | null;
  allowPrivate: () => boolean;
}

/** The most response text handed back per call (a model reads it; a huge body must not flood it). */
const MAX_RESPONSE_CHARS = 100_000;

/**
 * A REST adapter (adapter.json `kind = "rest"`, docs/integrations.md "REST adapters"): each
 * operation is a tool whose call is the described HTTP request. There is no session: "connect"
 * checks `base_url` against D9 and the connection stays up until closed.
 */
export function openRestConnection(options: RestConnectOptions): IntegrationConnection {
  const base = new URL(options.payload.base_url);
  checkUrlTarget(base, options.allowPrivate());
  const fetch = guardedFetch(options.allowPrivate);
  const operations = new Map(options.payload.operations.map((o) => [o.name, o]));
  return {
    listTools: () => Promise.resolve(options.payload.operations.map(toolOf)),
    async call(tool, args, { signal, idempotencyKey, timeoutMs }) {
      const operation = operations.get(tool);
      if (operation === undefined)
        return {
          text: `error: unknown operation '${tool}'; operations: ${[...operations.keys()].join(', ')}`,
          is_error: true,
        };
      const built = buildRequest(base, operation, args);
      if (typeof built === 'string') return { text: `error: ${built}`, is_error: true };
      const headers: Record<string, string> = { accept: 'application/json, text/plain;q=0.9, */*;q=0.8' };
      if (built.body !== undefined) headers['content-type'] = 'application/json';
      if (options.key !== null) headers.authorization = `Bearer ${options.key}`;
      if (idempotencyKey !== undefined) headers[IDEMPOTENCY_HEADER.toLowerCase()] = idempotencyKey;
      const timeout = AbortSignal.timeout(timeoutMs);
      const combined = signal === undefined ? timeout : AbortSignal.any([signal, timeout]);
      try {
        const response = await fetch(built.url, {
          method: operation.method ?? 'GET',
          headers,
          signal: combined,
          ...(built.body === undefined ? {} : { body: built.body }),
        });
        const text = (await response.text()).slice(0, MAX_RESPONSE_CHARS);
        if (response.ok) return { text, is_error: false };
        return {
          text: `HTTP ${response.status} ${response.statusText}`.trim() + (text === '' ? '' : `: ${text}`),
          is_error: true,
        };
      } catch (error) {
        if (signal?.aborted === true)
          throw new IntegrationCallError('aborted', 'the call was cancelled by its caller');
        if (timeout.aborted)
          throw new IntegrationCallError('timeout', `no answer within ${timeoutMs / 1000} s`);
        if ((error as { code?: unknown }).code === 'EPRIVATETARGET')
          throw new IntegrationCallError('refused', (error as Error).message);
        throw new IntegrationCallError(
          'connection_lost',
          `${operation.method ?? 'GET'} ${built.url.href} failed: ${(error as Error).message}`,
        );
      }
    },
    ping: () => Promise.resolve(),
    lost: new Promise<string>(() => undefined),
    close: () => Promise.resolve(),
  };
}

function toolOf(operation: AdapterOperation): IntegrationTool {
  return {
    name: operation.name,
    description: operation.description ?? `${operation.method ?? 'GET'} ${operation.path ?? '/'}`,
    input_schema: operation.input_schema ?? { type: 'object' },
    read_only: (operation.method ?? 'GET') === 'GET',
  };
}

/**
 * The request of one call: `{name}` placeholders in the path from the arguments (URL-encoded,
 * required), the other arguments as the query string for GET and DELETE, else as the JSON body.
 * A string is the problem with the arguments.
 */
export function buildRequest(
  base: URL,
  operation: AdapterOperation,
  args: Record<string, unknown>,
): { url: URL; body?: string } | string {
  const rest = { ...args };
  const missing: string[] = [];
  const path = (operation.path ?? '/').replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = rest[name];
    delete rest[name];
    if (value === undefined || value === null || value === '') {
      missing.push(name);
      return '';
    }
    return encodeURIComponent(typeof value === 'string' ? value : JSON.stringify(value));
  });
  if (missing.length > 0)
    return `missing argument(s) for the path ${operation.path ?? ''}: ${missing.join(', ')}`;
  const url = new URL(base.href.replace(/\/+$/, '') + path);
  const method = operation.method ?? 'GET';
  if (method === 'GET' || method === 'DELETE') {
    for (const [name, value] of Object.entries(rest)) {
      if (value === undefined || value === null) continue;
      url.searchParams.append(name, typeof value === 'string' ? value : JSON.stringify(value));
    }
    return { url };
  }
  return { url, body: JSON.stringify(rest) };
}
