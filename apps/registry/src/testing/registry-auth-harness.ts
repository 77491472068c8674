import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { installErrorHandling } from '@agent-platform/api';
import { createEmbeddedBus } from '@agent-platform/bus/embedded';
import { defaultConfig } from '@agent-platform/config';
import type { PlatformConfig } from '@agent-platform/contracts';
import { fixedClock } from '@agent-platform/domain';
import { createLogger } from '@agent-platform/observability';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { Type } from 'typebox';
import { installRegistryAuth } from '../auth/install-registry-auth.ts';
import type { RegistryAccess } from '../auth/registry-access.ts';
import type { RegistryApp } from '../registry-app.ts';
import { registryAuthRoutes } from '../routes/registry-auth-routes.ts';

/** The access levels the probe routes stand for: `GET /probe/<level>` (publish is a POST with a body). */
export const ACCESS_LEVELS: RegistryAccess[] = ['public', 'read', 'download', 'authenticated', 'publish', 'admin'];

/** An answer as a test reads it. */
export interface HarnessAnswer {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON shapes
  body: any;
  headers: Headers;
}

export interface RegistryAuthHarness {
  url: string;
  /** Live settings: a test changes `settings.auth.*` between requests. */
  settings: PlatformConfig['registry'];
  store: Store;
  clock: ReturnType<typeof fixedClock>;
  /** Every log line written so far. */
  logs(): string;
  /** A request with an optional bearer credential; the body, when given, is sent as JSON. */
  call(method: string, path: string, options?: { bearer?: string; authorization?: string; body?: unknown }): Promise<HarnessAnswer>;
  /** The probe route of an access level. */
  probe(level: RegistryAccess, bearer?: string): Promise<HarnessAnswer>;
  close(): Promise<void>;
}

/**
 * A registry app built the way registry-app.ts builds it (Fastify, TypeBox, the api's error
 * handling), with the registry auth hook, the auth routes and one probe route per access level,
 * listening on a free loopback port over a real embedded store.
 */
/**
 * `allowPrivateTargets`: `[network] allow_private_targets`; true by default here, since the test
 * identity providers listen on loopback.
 */
export async function startRegistryAuthHarness(
  auth: Partial<PlatformConfig['registry']['auth']>,
  options: { allowPrivateTargets?: boolean } = {},
): Promise<RegistryAuthHarness> {
  const dir = await mkdtemp(join(tmpdir(), 'ap-registry-auth-'));
  const clock = fixedClock(new Date());
  const store = await openEmbeddedStore({ path: join(dir, 'registry.db'), clock: () => clock.now() });
  const bus = createEmbeddedBus();
  const { logger, buffer } = createLogger({ level: 'info', bufferLines: 10_000, destination: 'silent' });
  const settings = structuredClone(defaultConfig().registry);
  Object.assign(settings.auth, auth);
  const app = Fastify({ loggerInstance: logger }).withTypeProvider<TypeBoxTypeProvider>() as unknown as RegistryApp;
  installErrorHandling(app);
  const deps = { store, bus, clock, logger, settings: () => settings, allowPrivateTargets: () => options.allowPrivateTargets ?? true };
  installRegistryAuth(app, deps);
  await registryAuthRoutes(app, deps);
  const Caller = Type.Object({ identity: Type.String(), role: Type.String(), authenticated: Type.Boolean(), key_id: Type.Union([Type.String(), Type.Null()]), issuer: Type.Union([Type.String(), Type.Null()]) });
  for (const level of ACCESS_LEVELS) {
    const options = { config: { registryAccess: level }, schema: { response: { 200: Caller } } };
    if (level === 'publish') {
      app.post('/probe/publish', { ...options, schema: { ...options.schema, body: Type.Object({ name: Type.String() }, { additionalProperties: false }) } }, async (request) => request.registryCaller);
    } else {
      app.get(`/probe/${level}`, options, async (request) => request.registryCaller);
    }
  }
  // As registry-app.ts declares /health today (no access level), and a route someone forgot to declare.
  app.get('/health', async () => ({ status: 'ok' }));
  app.get('/probe/undeclared', async (request) => request.registryCaller);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

  const call: RegistryAuthHarness['call'] = async (method, path, options = {}) => {
    const headers: Record<string, string> = {};
    if (options.bearer !== undefined) headers.authorization = `Bearer ${options.bearer}`;
    if (options.authorization !== undefined) headers.authorization = options.authorization;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${url}${path}`, { method, headers, ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }) });
    const text = await response.text();
    return { status: response.status, body: text === '' ? null : JSON.parse(text), headers: response.headers };
  };

  return {
    url,
    settings,
    store,
    clock,
    logs: () => buffer.lines().join('\n'),
    call,
    probe: (level, bearer) =>
      level === 'publish'
        ? call('POST', '/probe/publish', { ...(bearer === undefined ? {} : { bearer }), body: { name: 'pkg' } })
        : call('GET', `/probe/${level}`, bearer === undefined ? {} : { bearer }),
    async close() {
      await app.close();
      await bus.close();
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
