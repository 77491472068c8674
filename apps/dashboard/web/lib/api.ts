/**
 * The dashboard's only way to the platform: same-origin fetch of the api's public routes with the
 * signed-in bearer token, exactly as curl would call them. There is no dashboard-only route that
 * reads or changes anything, so the server's role checks are the only ones that count; the
 * buttons hidden from a role are a courtesy, not the protection.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly category: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export interface Api {
  get<T>(path: string, signal?: AbortSignal): Promise<T>;
  post<T>(path: string, body?: unknown): Promise<T>;
  /** The raw response of an authenticated request (downloads, event streams); errors still throw. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
}

/**
 * The message of an error body: the spec's envelope `{error: {category, message}}`, the flat
 * `{error: "forbidden", message}` of a role refusal, or `{error: "<text>"}`.
 */
async function errorOf(response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown };
    if (typeof body.error === 'object' && body.error !== null) {
      const envelope = body.error as { category?: unknown; message?: unknown };
      return new ApiError(
        response.status,
        typeof envelope.category === 'string' ? envelope.category : 'Error',
        typeof envelope.message === 'string' ? envelope.message : response.statusText,
      );
    }
    if (typeof body.error === 'string') {
      const message = typeof body.message === 'string' ? body.message : body.error;
      return new ApiError(response.status, body.error, message);
    }
  } catch {
    // Not JSON: fall through to the status line.
  }
  return new ApiError(response.status, 'Error', `${response.status} ${response.statusText}`.trim());
}

export function createApi(options: {
  token: () => string | null;
  onUnauthorized: (error: ApiError) => void;
}): Api {
  async function send(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    headers.set('api-version', 'v1');
    const token = options.token();
    if (token !== null) headers.set('authorization', `Bearer ${token}`);
    const response = await fetch(path, { ...init, headers, credentials: 'omit', cache: 'no-store' });
    if (response.ok) return response;
    const error = await errorOf(response);
    if (response.status === 401) options.onUnauthorized(error);
    throw error;
  }

  async function json<T>(response: Response): Promise<T> {
    const text = await response.text();
    return (text === '' ? null : JSON.parse(text)) as T;
  }

  return {
    get: async (path, signal) => json(await send(path, signal === undefined ? {} : { signal })),
    post: async (path, body) =>
      json(
        await send(path, {
          method: 'POST',
          ...(body === undefined
            ? {}
            : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
        }),
      ),
    fetch: send,
  };
}

/** What to tell a person about a failed call. */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.status === 403 && error.category === 'forbidden') return `Not allowed: ${error.message}.`;
    return error.message;
  }
  if (error instanceof DOMException && error.name === 'AbortError') return 'Cancelled.';
  if (error instanceof TypeError) return `The platform could not be reached (${error.message}).`;
  return error instanceof Error ? error.message : String(error);
}
