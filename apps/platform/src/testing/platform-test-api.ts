import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateLicenceKeyPair, issueLicence } from '@agent-platform/config';
import type { LicenceClaims, PlatformConfig } from '@agent-platform/contracts';
import type { AgentRecord, IntegrationHost } from '@agent-platform/domain';
import { agentFixture } from '@agent-platform/domain/testing';
import type { ApiDeps, ProcessService } from '@agent-platform/api';
import { startTestApi, type DeepPartial, type StartTestApiOptions, type TestApi } from '@agent-platform/api/testing';
import { composePlatformServices } from '../compose.ts';

const DAY_SECS = 86_400;

/** A licence valid now for 30 days, allowing `local` and managed-cloud providers; override any claim. */
export function licenceClaims(overrides: Partial<LicenceClaims> = {}): LicenceClaims {
  const now = Math.floor(Date.now() / 1000);
  return {
    carrier_name: 'Acme Mutual',
    carrier_id: `acme-${randomUUID().slice(0, 8)}`,
    iat: now - DAY_SECS,
    exp: now + 30 * DAY_SECS,
    period_start: new Date((now - DAY_SECS) * 1000).toISOString(),
    period_end: new Date((now + 29 * DAY_SECS) * 1000).toISOString(),
    providers: { local: true, managed_cloud: true },
    ...overrides,
  };
}

export interface PlatformTestApi extends TestApi {
  /** Removes the licence files' temp dir too. */
  close(): Promise<void>;
  /** The all-in-one's integration host (its IntegrationTools: what the tool loop calls), as composed now. */
  integrationHost(): IntegrationHost;
  /** The services composed beside the api listener, as composed now (the registry among them when enabled). */
  services(): ProcessService[];
}

export interface StartPlatformTestApiOptions extends Omit<StartTestApiOptions, 'services'> {
  /** The licence to sign and configure; `null` = start without any licence. Default: licenceClaims(). */
  licence?: LicenceClaims | null;
  /** The environment the all-in-one's services see (stdio integration servers inherit it). Default: empty. */
  serviceEnv?: Record<string, string | undefined>;
}

/**
 * The api with the all-in-one's services (the agent worker among them) over the same deps, as
 * `npm start` composes them, and a licence signed by a key made for the test.
 */
export async function startPlatformTestApi(options: StartPlatformTestApiOptions = {}): Promise<PlatformTestApi> {
  const dir = await mkdtemp(join(tmpdir(), 'ap-platform-licence-'));
  const claims = options.licence === undefined ? licenceClaims() : options.licence;
  let licenceConfig: DeepPartial<PlatformConfig> = {};
  if (claims !== null) {
    const keys = await generateLicenceKeyPair();
    await writeFile(join(dir, 'public.pem'), keys.publicKeyPem);
    await writeFile(join(dir, 'licence.jwt'), `${await issueLicence(keys.privateKeyPem, claims)}\n`);
    licenceConfig = { licence: { file: join(dir, 'licence.jwt'), public_key_file: join(dir, 'public.pem') } };
  }
  let host: IntegrationHost | null = null;
  let current: ProcessService[] = [];
  const services = (deps: ApiDeps): ProcessService[] => {
    const composed = composePlatformServices(deps, options.serviceEnv ?? {});
    host = composed.find((s): s is IntegrationHost => s.name === 'integration-host') ?? null;
    current = composed;
    return composed;
  };
  const api = await startTestApi({ ...options, config: { ...options.config, ...licenceConfig }, services }).catch(
    async (error: unknown) => {
      await rm(dir, { recursive: true, force: true });
      throw error;
    },
  );
  const close = api.close.bind(api);
  return Object.assign(api, {
    services: () => current,
    integrationHost: () => {
      if (host === null) throw new Error('the platform composed no integration host');
      return host;
    },
    close: async () => {
      await close();
      await rm(dir, { recursive: true, force: true });
    },
  });
}

/** Inserts an agent record directly, as an install would leave it (Running unless said otherwise). */
export async function insertAgent(api: TestApi, overrides: Partial<AgentRecord> = {}): Promise<AgentRecord> {
  return api.deps.agents.insert(agentFixture(overrides));
}

/** The events of a text/event-stream body: `event` (default `message`) and the raw `data`. */
export function parseEventStream(text: string): Array<{ event: string; data: string }> {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((l) => l.startsWith('event: '))?.slice('event: '.length) ?? 'message';
      const data = lines
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice('data: '.length))
        .join('\n');
      return { event, data };
    });
}
