import createClient, { type Client, type Middleware } from 'openapi-fetch';
import { PlatformApiError } from './errors.ts';
import type { paths } from './generated/api.ts';

/** The one api version the platform speaks (docs/http.md, step 1). */
export const API_VERSION = 'v1';

/**
 * A typed client of the platform's HTTP api: `GET`, `POST`, `PUT`, `PATCH`, `DELETE` take a path
 * of the OpenAPI document (`'/agents/{id}/send'`) and its typed params and body, and resolve to
 * `{data, error, response}` (openapi-fetch). `unwrap` turns that into the data or a thrown
 * `PlatformApiError`.
 */
export type PlatformClient = Client<paths>;

export interface PlatformClientOptions {
  /** Where the api listens: `http://127.0.0.1:4200`. */
  baseUrl: string;
  /**
   * An API key's secret (`svc_sk_...`) or an OIDC access token, sent as `Authorization: Bearer`.
   * Omit it for GET /health and for creating the first key of an empty key store.
   */
  token?: string;
  /** Headers sent with every request besides `Api-Version` and `Authorization`. */
  headers?: Record<string, string>;
  /** Replaces `globalThis.fetch` (a proxy agent, a recording fetch in tests). */
  fetch?: (request: Request) => Promise<Response>;
  /** openapi-fetch middleware: see each request and response (logging, retries, metrics). */
  middleware?: Middleware[];
}

/** Creates a client for one platform and one credential. */
export function createPlatformClient(options: PlatformClientOptions): PlatformClient {
  const client = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: {
      ...options.headers,
      'Api-Version': API_VERSION,
      ...(options.token === undefined ? {} : { Authorization: `Bearer ${options.token}` }),
    },
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });
  if (options.middleware !== undefined && options.middleware.length > 0) client.use(...options.middleware);
  return client;
}

/** What every call of a `PlatformClient` resolves to. */
export interface CallResult {
  data?: unknown;
  error?: unknown;
  response: Response;
}

/** The success body of a call's result type. */
export type DataOf<R> = R extends { data: infer D } ? D : never;

/**
 * The body of a successful call, typed from the document; any other status throws a
 * `PlatformApiError` carrying the error body in the spec's shape:
 *
 * ```ts
 * const { agents } = await unwrap(client.GET('/agents'));
 * ```
 *
 * A 204 resolves to `undefined`.
 */
export async function unwrap<R extends CallResult>(call: Promise<R> | R): Promise<DataOf<R>> {
  const result = await call;
  if (!result.response.ok)
    throw new PlatformApiError(
      result.response.status,
      result.error,
      result.response.headers.get('x-request-id'),
    );
  return result.data as DataOf<R>;
}
