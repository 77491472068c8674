/** A registry's answer as tests read it: the status and the parsed JSON body (null when empty). */
export interface RegistryAnswer {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON shapes
  body: any;
}

export interface RegistryCallOptions {
  bearer?: string;
  /** A JSON body (`application/json`). */
  json?: unknown;
  /** A package archive (`application/gzip`). */
  archive?: Uint8Array;
}

/** One HTTP call to a registry at `url` (tests): a bearer, a JSON or archive body, the JSON answer. */
export async function registryCall(url: string, method: string, path: string, options: RegistryCallOptions = {}): Promise<RegistryAnswer> {
  const headers: Record<string, string> = {};
  if (options.bearer !== undefined) headers.authorization = `Bearer ${options.bearer}`;
  let body: string | Uint8Array | undefined;
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  } else if (options.archive !== undefined) {
    headers['content-type'] = 'application/gzip';
    body = options.archive;
  }
  const response = await fetch(`${url}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
  const text = await response.text();
  return { status: response.status, body: text === '' ? null : JSON.parse(text) };
}
