import {
  RegistryCollection,
  RegistryDependents,
  RegistryDownloads,
  RegistryIssuedToken,
  RegistryPackage,
  RegistryPackageOwners,
  RegistrySearchResult,
  RegistryTeam,
  RegistryTeamDeleted,
  RegistryTeamList,
  RegistrySigningKey,
  RegistryVersion,
  RegistryToken,
  RegistryTokenList,
  RegistryTrustedPublishers,
  RegistryVersionList,
  RegistryWhoami,
  RevocationFeed,
  type RegistrySearchQuery,
  type RegistryTeamRole,
  type RegistryTokenCreateBody,
  type TrustedPublisher,
  type RegistryYankBody,
} from '@agent-platform/contracts';
import { readCappedBody } from '@agent-platform/net';
import { MAX_ARCHIVE_CONTENT_BYTES } from '@agent-platform/packages';
import type { Static, TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { RegistryRequestError } from './registry-request-error.ts';

export interface HttpRegistryClientOptions {
  /** Base URL of the registry (`http://registry.internal:4210`; a path prefix is kept). */
  url: string;
  /** A call with no complete answer after this long fails (the platform: `[catalog] request_timeout_ms`). */
  timeoutMs: number;
  /** Named in the timeout message, e.g. `[catalog] request_timeout_ms`. */
  timeoutSetting?: string;
  /** The bearer sent with every call (a `reg_sk_` key or an OIDC token), read per call; empty = anonymous. */
  token?: () => string | undefined;
  /** Default: the global fetch. */
  fetch?: typeof fetch;
  /** Largest JSON answer read; default 8 MiB. */
  maxJsonBytes?: number;
  /** Largest archive downloaded; default the archive reader's own content limit. */
  maxArchiveBytes?: number;
}

/** The registry's HTTP surface as its clients use it: the platform's catalog and the CLI. */
export interface HttpRegistryClient {
  /** The base URL as messages show it: no user info, query or trailing slash. */
  readonly url: string;
  /** `GET /packages/{name}`; null when the registry does not know the name. */
  package(name: string): Promise<RegistryPackage | null>;
  /** `GET /packages/{name}/downloads`: per version and per day; null when the name is unknown. */
  downloads(name: string): Promise<RegistryDownloads | null>;
  /** `GET /packages/{name}/dependents`: the packages whose latest version depends on it; null when the name is unknown. */
  dependents(name: string): Promise<RegistryDependents | null>;
  versions(name: string): Promise<RegistryVersion[] | null>;
  version(name: string, version: string): Promise<RegistryVersion | null>;
  download(name: string, version: string): Promise<Uint8Array | null>;
  search(query: RegistrySearchQuery): Promise<RegistrySearchResult>;
  collection(name: string): Promise<RegistryCollection | null>;
  signingKey(): Promise<RegistrySigningKey>;
  whoami(): Promise<RegistryWhoami>;
  /** `POST /packages` with the archive bytes; the registry's record of the signed version. */
  publish(archive: Uint8Array): Promise<RegistryVersion>;
  yank(name: string, version: string, body: RegistryYankBody): Promise<RegistryVersion>;
  /**
   * `GET /revocations?since=<seq>`: the compact JWS of the signed revocation feed (docs/registry.md
   * "Revocation feed"), unverified: the caller verifies it against its trusted keys. `signal`
   * abandons the call early (a watcher stopping), on top of the timeout.
   */
  revocations(since: number, options?: { signal?: AbortSignal }): Promise<string>;
  /** `PUT /packages/{name}/deprecation` with the message, or `DELETE` it when null: the package as it now is. */
  deprecate(name: string, message: string | null): Promise<RegistryPackage>;
  /** `PUT /packages/{name}/dist-tags/{tag}` with the version, or `DELETE` it when null: the package as it now is. */
  setDistTag(name: string, tag: string, version: string | null): Promise<RegistryPackage>;
  /** `POST /tokens`: a token acting as the caller (docs/registry-auth.md "Tokens"); its secret is in the answer only. */
  createToken(body: RegistryTokenCreateBody): Promise<RegistryIssuedToken>;
  /** `GET /tokens`: the caller's tokens, never a secret. */
  tokens(): Promise<RegistryToken[]>;
  /** `DELETE /tokens/{id}`: the token, revoked. */
  revokeToken(id: string): Promise<RegistryToken>;
  /** `GET /packages/{name}/trusted-publishers` (docs/registry-auth.md "Trusted publishing"). */
  trustedPublishers(name: string): Promise<TrustedPublisher[]>;
  /** `PUT /packages/{name}/trusted-publishers`: the whole list replaced (empty: off); the list as stored. */
  setTrustedPublishers(name: string, publishers: readonly TrustedPublisher[]): Promise<TrustedPublisher[]>;
  /** `GET /packages/{name}/owners`: the owners and the pending invitations the caller may see; null when the name is unknown. */
  owners(name: string): Promise<RegistryPackageOwners | null>;
  /** `PUT /packages/{name}/owners`: owners left out removed, new ones invited (docs/registry.md "Ownership"). */
  setOwners(name: string, owners: readonly string[]): Promise<RegistryPackage>;
  /** `POST /packages/{name}/owners/accept`: your invitation (owner absent) or a team's you own (`team:<name>`). */
  acceptOwnership(name: string, owner?: string): Promise<RegistryPackage>;
  /** `POST /teams`, `GET /teams`, `GET /teams/{team}` (docs/registry.md "Teams"). */
  createTeam(name: string): Promise<RegistryTeam>;
  teams(): Promise<RegistryTeam[]>;
  team(name: string): Promise<RegistryTeam | null>;
  /** `POST /teams/{team}/invitations`, `.../invitations/accept`, `DELETE /teams/{team}/members/{identity}`. */
  inviteToTeam(name: string, identity: string, role: RegistryTeamRole): Promise<RegistryTeam>;
  acceptTeamInvitation(name: string): Promise<RegistryTeam>;
  removeTeamMember(name: string, identity: string): Promise<RegistryTeam>;
  /** `DELETE /teams/{team}`: refused (409) while a package names the team. */
  deleteTeam(name: string): Promise<RegistryTeamDeleted>;
}

interface Call {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  body?: { bytes: Uint8Array; type: string };
  /** 404 answers null instead of failing. */
  nullOn404?: boolean;
  maxBytes: number;
  /** Abandons the call (besides the timeout): the error then says it was cancelled. */
  signal?: AbortSignal;
}

/**
 * The registry client (docs/catalog.md "Installing by name"). Every call is bounded in time
 * (`timeoutMs`, the whole answer included) and in size; failures are `RegistryRequestError`s
 * (502 through the api). The registry URL is operator configuration, trusted like provider URLs
 * (DECISIONS D9): private addresses are allowed and the platform's outbound guard does not apply.
 */
export function createHttpRegistryClient(options: HttpRegistryClientOptions): HttpRegistryClient {
  const base = options.url.endsWith('/') ? options.url : `${options.url}/`;
  const shownUrl = displayUrl(options.url);
  // fetch refuses a URL with user info, and its message would show the password: say so plainly.
  const userInfo = hasUserInfo(options.url);
  const doFetch = options.fetch ?? fetch;
  const maxJson = options.maxJsonBytes ?? 8 * 1024 * 1024;
  const maxArchive = options.maxArchiveBytes ?? MAX_ARCHIVE_CONTENT_BYTES;
  const seg = encodeURIComponent;

  const fail = (message: string, status: number | null, details: Record<string, unknown>, cause?: unknown) =>
    new RegistryRequestError(`registry ${shownUrl}: ${message}`, {
      status,
      details: { registry: shownUrl, ...details },
      retryable: status === null || status >= 500,
      cause,
    });

  async function send(call: Call): Promise<{ status: number; headers: Headers; bytes: Uint8Array } | null> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), options.timeoutMs);
    const cancel = () => controller.abort();
    call.signal?.addEventListener('abort', cancel, { once: true });
    const what = `${call.method ?? 'GET'} /${call.path}`;
    try {
      if (userInfo)
        throw fail('the URL carries user info (user:password@), which is never sent: give the registry key as a bearer instead ([catalog] registry_key_env)', null, { reason: 'bad_url' });
      call.signal?.throwIfAborted();
      const headers: Record<string, string> = { accept: 'application/json' };
      const token = options.token?.();
      if (token !== undefined && token !== '') headers.authorization = `Bearer ${token}`;
      if (call.body !== undefined) headers['content-type'] = call.body.type;
      const response = await doFetch(new URL(call.path, base), {
        method: call.method ?? 'GET',
        headers,
        ...(call.body === undefined ? {} : { body: call.body.bytes }),
        signal: controller.signal,
        redirect: 'follow',
      });
      if (response.status === 404 && call.nullOn404 === true) {
        await response.body?.cancel().catch(() => undefined);
        return null;
      }
      const bytes = await readCappedBody(response, call.maxBytes);
      if (bytes === null) throw fail(`the answer to ${what} is over ${call.maxBytes} bytes`, response.status, { reason: 'too_large' });
      if (response.status >= 400) throw refusal(what, response.status, bytes);
      return { status: response.status, headers: response.headers, bytes };
    } catch (error) {
      if (error instanceof RegistryRequestError) throw error;
      if (call.signal?.aborted === true) throw fail(`${what} cancelled`, null, { reason: 'cancelled' }, error);
      if (controller.signal.aborted) {
        const setting = options.timeoutSetting === undefined ? '' : ` (${options.timeoutSetting})`;
        throw fail(`no answer to ${what} within ${options.timeoutMs} ms${setting}`, null, { reason: 'timeout' }, error);
      }
      throw fail(`unreachable (${networkReason(error)})`, null, { reason: 'unreachable' }, error);
    } finally {
      clearTimeout(timer);
      call.signal?.removeEventListener('abort', cancel);
    }
  }

  function refusal(what: string, status: number, bytes: Uint8Array): RegistryRequestError {
    const envelope = parseEnvelope(bytes);
    const said = envelope === null ? '' : `: ${envelope.category}: ${envelope.message}`;
    return fail(`${what} answered ${status}${said}`, status, {
      reason: status >= 500 ? 'registry_failed' : 'refused',
      status,
      ...(envelope === null ? {} : { registry_error: envelope }),
    });
  }

  async function json<S extends TSchema>(schema: S, call: Omit<Call, 'maxBytes'>, shape: string): Promise<Static<S> | null> {
    const answer = await send({ ...call, maxBytes: maxJson });
    if (answer === null) return null;
    let body: unknown;
    try {
      body = JSON.parse(new TextDecoder().decode(answer.bytes));
    } catch {
      body = undefined;
    }
    if (!Value.Check(schema, body)) throw fail(`the answer to ${call.method ?? 'GET'} /${call.path} is not a ${shape}`, answer.status, { reason: 'bad_answer' });
    return body;
  }

  const must = <T>(value: T | null, what: string): T => {
    if (value === null) throw fail(`${what} answered 404`, 404, { reason: 'refused', status: 404 });
    return value;
  };

  return {
    url: shownUrl,
    package: (name) => json(RegistryPackage, { path: `packages/${seg(name)}`, nullOn404: true }, 'RegistryPackage'),
    owners: (name) => json(RegistryPackageOwners, { path: `packages/${seg(name)}/owners`, nullOn404: true }, 'RegistryPackageOwners'),
    downloads: (name) => json(RegistryDownloads, { path: `packages/${seg(name)}/downloads`, nullOn404: true }, 'RegistryDownloads'),
    dependents: (name) => json(RegistryDependents, { path: `packages/${seg(name)}/dependents`, nullOn404: true }, 'RegistryDependents'),
    async versions(name) {
      const list = await json(RegistryVersionList, { path: `packages/${seg(name)}/versions`, nullOn404: true }, 'RegistryVersionList');
      return list?.versions ?? null;
    },
    version: (name, version) =>
      json(RegistryVersion, { path: `packages/${seg(name)}/${seg(version)}`, nullOn404: true }, 'RegistryVersion'),
    async download(name, version) {
      const answer = await send({ path: `packages/${seg(name)}/${seg(version)}/download`, nullOn404: true, maxBytes: maxArchive });
      return answer?.bytes ?? null;
    },
    async search(query) {
      const params = new URLSearchParams();
      for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value));
      const text = params.toString();
      return must(await json(RegistrySearchResult, { path: `search${text === '' ? '' : `?${text}`}` }, 'RegistrySearchResult'), 'GET /search');
    },
    collection: (name) => json(RegistryCollection, { path: `collections/${seg(name)}`, nullOn404: true }, 'RegistryCollection'),
    async signingKey() {
      return must(await json(RegistrySigningKey, { path: 'signing-key' }, 'RegistrySigningKey'), 'GET /signing-key');
    },
    async whoami() {
      return must(await json(RegistryWhoami, { path: 'auth/whoami' }, 'RegistryWhoami'), 'GET /auth/whoami');
    },
    async publish(archive) {
      const call = { method: 'POST' as const, path: 'packages', body: { bytes: archive, type: 'application/gzip' } };
      return must(await json(RegistryVersion, call, 'RegistryVersion'), 'POST /packages');
    },
    async yank(name, version, body) {
      const bytes = new TextEncoder().encode(JSON.stringify(body));
      const call = { method: 'POST' as const, path: `packages/${seg(name)}/${seg(version)}/yank`, body: { bytes, type: 'application/json' } };
      return must(await json(RegistryVersion, call, 'RegistryVersion'), `POST /packages/${name}/${version}/yank`);
    },
    async deprecate(name, message) {
      const path = `packages/${seg(name)}/deprecation`;
      const call =
        message === null
          ? { method: 'DELETE' as const, path }
          : { method: 'PUT' as const, path, body: { bytes: new TextEncoder().encode(JSON.stringify({ message })), type: 'application/json' } };
      return must(await json(RegistryPackage, call, 'RegistryPackage'), `${call.method} /${path}`);
    },
    async setDistTag(name, tag, version) {
      const path = `packages/${seg(name)}/dist-tags/${seg(tag)}`;
      const call =
        version === null
          ? { method: 'DELETE' as const, path }
          : { method: 'PUT' as const, path, body: { bytes: new TextEncoder().encode(JSON.stringify({ version })), type: 'application/json' } };
      return must(await json(RegistryPackage, call, 'RegistryPackage'), `${call.method} /${path}`);
    },
    async createToken(body) {
      const call = { method: 'POST' as const, path: 'tokens', body: { bytes: new TextEncoder().encode(JSON.stringify(body)), type: 'application/json' } };
      return must(await json(RegistryIssuedToken, call, 'RegistryIssuedToken'), 'POST /tokens');
    },
    async tokens() {
      return must(await json(RegistryTokenList, { path: 'tokens' }, 'RegistryTokenList'), 'GET /tokens').tokens;
    },
    async revokeToken(id) {
      return must(await json(RegistryToken, { method: 'DELETE', path: `tokens/${seg(id)}` }, 'RegistryToken'), `DELETE /tokens/${id}`);
    },
    async trustedPublishers(name) {
      const path = `packages/${seg(name)}/trusted-publishers`;
      return must(await json(RegistryTrustedPublishers, { path }, 'RegistryTrustedPublishers'), `GET /${path}`).publishers;
    },
    async setTrustedPublishers(name, publishers) {
      const path = `packages/${seg(name)}/trusted-publishers`;
      const call = { method: 'PUT' as const, path, body: jsonBody({ publishers }) };
      return must(await json(RegistryTrustedPublishers, call, 'RegistryTrustedPublishers'), `PUT /${path}`).publishers;
    },
    async setOwners(name, owners) {
      const path = `packages/${seg(name)}/owners`;
      return must(await json(RegistryPackage, { method: 'PUT', path, body: jsonBody({ owners }) }, 'RegistryPackage'), `PUT /${path}`);
    },
    async acceptOwnership(name, owner) {
      const path = `packages/${seg(name)}/owners/accept`;
      return must(await json(RegistryPackage, { method: 'POST', path, body: jsonBody(owner === undefined ? {} : { owner }) }, 'RegistryPackage'), `POST /${path}`);
    },
    async createTeam(name) {
      return must(await json(RegistryTeam, { method: 'POST', path: 'teams', body: jsonBody({ name }) }, 'RegistryTeam'), 'POST /teams');
    },
    async teams() {
      return must(await json(RegistryTeamList, { path: 'teams' }, 'RegistryTeamList'), 'GET /teams').teams;
    },
    team: (name) => json(RegistryTeam, { path: `teams/${seg(name)}`, nullOn404: true }, 'RegistryTeam'),
    async inviteToTeam(name, identity, role) {
      const path = `teams/${seg(name)}/invitations`;
      return must(await json(RegistryTeam, { method: 'POST', path, body: jsonBody({ identity, role }) }, 'RegistryTeam'), `POST /${path}`);
    },
    async acceptTeamInvitation(name) {
      const path = `teams/${seg(name)}/invitations/accept`;
      return must(await json(RegistryTeam, { method: 'POST', path }, 'RegistryTeam'), `POST /${path}`);
    },
    async removeTeamMember(name, identity) {
      const path = `teams/${seg(name)}/members/${seg(identity)}`;
      return must(await json(RegistryTeam, { method: 'DELETE', path }, 'RegistryTeam'), `DELETE /teams/${name}/members/${identity}`);
    },
    async deleteTeam(name) {
      return must(await json(RegistryTeamDeleted, { method: 'DELETE', path: `teams/${seg(name)}` }, 'RegistryTeamDeleted'), `DELETE /teams/${name}`);
    },
    async revocations(since, { signal } = {}) {
      if (!Number.isSafeInteger(since) || since < 0) throw new RangeError(`revocations since ${since}: a seq is an integer >= 0`);
      const call = { path: `revocations?since=${since}`, ...(signal === undefined ? {} : { signal }) };
      return must(await json(RevocationFeed, call, 'RevocationFeed'), 'GET /revocations').feed;
    },
  };
}

function jsonBody(value: unknown): { bytes: Uint8Array; type: string } {
  return { bytes: new TextEncoder().encode(JSON.stringify(value)), type: 'application/json' };
}

/**
 * The registry URL as messages and logs show it: no user info and no query (a credential could
 * hide in either), no trailing slash.
 */
function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`.replace(/\/+$/, '');
  } catch {
    return '(not a URL)';
  }
}

function hasUserInfo(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.username !== '' || parsed.password !== '';
  } catch {
    return false;
  }
}

function parseEnvelope(bytes: Uint8Array): { category: string; message: string } | null {
  try {
    const body = JSON.parse(new TextDecoder().decode(bytes)) as { error?: { category?: unknown; message?: unknown } };
    const { category, message } = body.error ?? {};
    return typeof category === 'string' && typeof message === 'string' ? { category, message: message.slice(0, 500) } : null;
  } catch {
    return null;
  }
}

function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return error instanceof Error ? error.message : String(error);
}
