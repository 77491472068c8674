import { generateKeyPairSync } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RegistryCollection, RegistrySearchHit, RegistryVersion, RegistryYankBody } from '@agent-platform/contracts';
import { compareVersions, loadArchive } from '@agent-platform/packages';
import { createSigner, sha256Tagged, type RegistrySigner, type SignedVersion } from '../../signing/registry-signing.ts';
import { ANY_PLATFORM } from './example-archives.ts';

/** One request the fake registry received. */
export interface ReceivedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  authorization: string | undefined;
  content_type: string | undefined;
  body: Buffer;
}

export interface AddOptions {
  /** Signs with this key instead of the registry's (a key the platform does not trust). */
  signer?: RegistrySigner;
  /** Signs these fields instead of the true ones (a signature made for another version...). */
  signFor?: Partial<SignedVersion>;
  /** Serves these bytes on download instead of the published archive (a tampered archive). */
  served?: Uint8Array;
}

/**
 * A small HTTP server speaking the registry wire format (libs/contracts http/registry.ts) for the
 * platform-side tests: real Ed25519 signatures (`createSigner`), real archives, and faults the
 * real registry never shows on purpose (a tampered download, a hang, a 503). Not the registry:
 * apps/registry is; this only answers what install by name, search and the CLI ask.
 */
export interface FakeRegistry {
  readonly url: string;
  readonly signer: RegistrySigner;
  /** `ed25519:<base64url>`: the [catalog] trusted_keys entry of this registry. */
  readonly publicKey: string;
  readonly requests: ReceivedRequest[];
  /** `ok`; `hang`: accept requests and never answer; `fail`: answer 503. */
  mode: 'ok' | 'hang' | 'fail';
  /** When set, publish, yank and whoami need `Authorization: Bearer <key>`. */
  acceptedKey: string | undefined;
  /** Publishes an archive as the registry would, signed; returns its version record. */
  add(archive: Uint8Array, options?: AddOptions): RegistryVersion;
  yank(name: string, version: string, reason: string, security?: boolean): void;
  setCollection(collection: Pick<RegistryCollection, 'name' | 'packages'> & Partial<RegistryCollection>): void;
  close(): Promise<void>;
}

interface Stored {
  record: RegistryVersion;
  served: Uint8Array;
}

export async function startFakeRegistry(): Promise<FakeRegistry> {
  const signer = createSigner(generateKeyPairSync('ed25519').privateKey);
  const packages = new Map<string, Stored[]>();
  const collections = new Map<string, RegistryCollection>();
  const requests: ReceivedRequest[] = [];
  const hanging = new Set<ServerResponse>();

  const add = (archive: Uint8Array, options: AddOptions = {}): RegistryVersion => {
    const pkg = loadArchive(archive, { platformVersion: ANY_PLATFORM });
    const meta = pkg.manifest.package;
    const truth: SignedVersion = { name: meta.name, version: meta.version, archive_sha256: sha256Tagged(archive), content_hash: pkg.content_hash };
    const by = options.signer ?? signer;
    const record: RegistryVersion = {
      name: meta.name,
      version: meta.version,
      type: meta.type,
      title: meta.title,
      description: meta.description,
      license: meta.license ?? '',
      min_platform_version: meta.min_platform_version,
      keywords: pkg.manifest.package.metadata?.keywords ?? [],
      categories: pkg.manifest.package.metadata?.categories ?? [],
      regions: pkg.manifest.package.metadata?.regions ?? [],
      dependencies: { ...pkg.manifest.dependencies },
      content_hash: truth.content_hash,
      archive_sha256: truth.archive_sha256,
      size_bytes: archive.byteLength,
      signature: by.signVersion({ ...truth, ...options.signFor }),
      key_id: by.publicKey.key_id,
      published_at: new Date().toISOString(),
      published_by: 'publisher-1',
      yanked: false,
      yank: null,
    };
    const list = (packages.get(meta.name) ?? []).filter((s) => s.record.version !== meta.version);
    list.push({ record, served: options.served ?? archive });
    list.sort((a, b) => compareVersions(b.record.version, a.record.version));
    packages.set(meta.name, list);
    return record;
  };

  const find = (name: string, version: string) => packages.get(name)?.find((s) => s.record.version === version);

  const setYank = (name: string, version: string, body: RegistryYankBody): RegistryVersion | undefined => {
    const stored = find(name, version);
    if (stored === undefined) return undefined;
    const yanked = body.yanked ?? true;
    stored.record.yanked = yanked;
    stored.record.yank = yanked
      ? { reason: body.reason, security: body.security ?? false, yanked_at: new Date().toISOString(), yanked_by: 'publisher-1' }
      : null;
    return stored.record;
  };

  const search = (query: Record<string, string>): RegistrySearchHit[] => {
    const words = (query.q ?? '').toLowerCase().split(/\s+/).filter(Boolean);
    const hits: RegistrySearchHit[] = [];
    for (const [name, list] of packages) {
      const latest = list.find((s) => !s.record.yanked)?.record;
      if (latest === undefined) continue;
      const text = `${name} ${latest.title} ${latest.description} ${latest.keywords.join(' ')}`.toLowerCase();
      if (!words.every((w) => text.includes(w))) continue;
      if (query.type !== undefined && latest.type !== query.type) continue;
      if (query.category !== undefined && !latest.categories.some((c) => c.startsWith(query.category ?? ''))) continue;
      if (query.region !== undefined && latest.regions.length > 0 && !latest.regions.includes(query.region.toUpperCase())) continue;
      const { title, description, keywords, categories, regions, type } = latest;
      hits.push({ name, type, title, description, latest: latest.version, keywords, categories, regions, score: words.length });
    }
    return hits.sort((a, b) => a.name.localeCompare(b.name));
  };

  const authorized = (req: IncomingMessage): boolean =>
    registry.acceptedKey === undefined || req.headers.authorization === `Bearer ${registry.acceptedKey}`;

  const handle = (req: IncomingMessage, res: ServerResponse, body: Buffer): void => {
    const url = new URL(req.url ?? '/', 'http://registry');
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    requests.push({
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      authorization: req.headers.authorization,
      content_type: req.headers['content-type'],
      body,
    });
    if (registry.mode === 'hang') {
      hanging.add(res);
      return;
    }
    if (registry.mode === 'fail') return send(res, 503, envelope('Internal', 'the registry store is down'));
    const [first, name, version, action] = parts;
    const get = req.method === 'GET';
    if (get && first === 'signing-key' && parts.length === 1) return send(res, 200, signer.publicKey);
    if (get && first === 'auth' && name === 'whoami') {
      if (!authorized(req)) return send(res, 401, envelope('AuthError', 'a registry key is required'));
      const known = req.headers.authorization !== undefined;
      return send(res, 200, { identity: known ? 'publisher-1' : 'anonymous', role: known ? 'publisher' : 'reader', authenticated: known, key_id: known ? 'key-1' : null, issuer: null });
    }
    if (get && first === 'search' && parts.length === 1) {
      const hits = search(Object.fromEntries(url.searchParams));
      const page = Number(url.searchParams.get('page') ?? 1);
      const perPage = Number(url.searchParams.get('per_page') ?? 20);
      return send(res, 200, { total: hits.length, page, per_page: perPage, results: hits.slice((page - 1) * perPage, page * perPage) });
    }
    if (get && first === 'collections' && name !== undefined && parts.length === 2) {
      const collection = collections.get(name);
      return collection === undefined ? send(res, 404, envelope('NotFound', `collection '${name}' not found`)) : send(res, 200, collection);
    }
    if (first === 'packages') return packageRoute(req, res, body, { name, version, action, get, count: parts.length });
    send(res, 404, envelope('NotFound', `no route ${req.method ?? ''} ${url.pathname}`));
  };

  const packageRoute = (
    req: IncomingMessage,
    res: ServerResponse,
    body: Buffer,
    at: { name: string | undefined; version: string | undefined; action: string | undefined; get: boolean; count: number },
  ): void => {
    const { name, version, action, get } = at;
    if (!get && name === undefined) {
      if (!authorized(req)) return send(res, 401, envelope('AuthError', 'a registry key is required'));
      try {
        return send(res, 201, add(body));
      } catch (error) {
        return send(res, 400, envelope('ValidationError', error instanceof Error ? error.message : String(error)));
      }
    }
    const list = name === undefined ? undefined : packages.get(name);
    if (list === undefined || name === undefined) return send(res, 404, envelope('NotFound', `package '${name ?? ''}' not found`));
    if (get && version === undefined) {
      const records = list.map((s) => s.record);
      const latest = records.find((r) => !r.yanked) ?? null;
      const first = records[records.length - 1];
      return send(res, 200, { name, type: records[0]?.type, title: latest?.title ?? '', description: latest?.description ?? '', owners: ['publisher-1'], latest: latest?.version ?? null, versions: records.map((r) => r.version), keywords: [], categories: [], regions: [], created_at: first?.published_at, updated_at: first?.published_at });
    }
    if (get && version === 'versions' && at.count === 3) return send(res, 200, { name, versions: list.map((s) => s.record) });
    const stored = version === undefined ? undefined : find(name, version);
    if (stored === undefined || version === undefined) return send(res, 404, envelope('NotFound', `version '${name} ${version ?? ''}' not found`));
    if (get && action === undefined) return send(res, 200, stored.record);
    if (get && action === 'download') {
      const { record } = stored;
      res.writeHead(200, {
        'content-type': 'application/gzip',
        'x-registry-signature': record.signature,
        'x-registry-key-id': record.key_id,
        'x-archive-sha256': record.archive_sha256,
        'x-content-hash': record.content_hash,
      });
      return void res.end(Buffer.from(stored.served));
    }
    if (!get && action === 'yank') {
      if (!authorized(req)) return send(res, 401, envelope('AuthError', 'a registry key is required'));
      return send(res, 200, setYank(name, version, JSON.parse(body.toString()) as RegistryYankBody));
    }
    send(res, 404, envelope('NotFound', 'no such route'));
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const registry: FakeRegistry = {
    url: `http://127.0.0.1:${port}`,
    signer,
    publicKey: signer.publicKey.public_key,
    requests,
    mode: 'ok',
    acceptedKey: undefined,
    add,
    yank: (name, version, reason, security = false) => void setYank(name, version, { reason, security }),
    setCollection: (c) =>
      collections.set(c.name, {
        display_name: c.name,
        description: `The ${c.name} collection.`,
        version: '1.0.0',
        license: 'Apache-2.0',
        featured: false,
        tags: [],
        owners: ['publisher-1'],
        created_at: new Date().toISOString(),
        updated_at: new Date().toISOString(),
        ...c,
      }),
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return registry;
}

function envelope(category: string, message: string) {
  return { error: { category, message } };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
