import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Subjects, type AgentInvokeReply } from '@agent-platform/contracts';
import { connectNatsBus, type NatsBus } from '@agent-platform/bus/nats';
import { generateLicenceKeyPair, issueLicence } from '@agent-platform/config';
import { createAgentStore } from '@agent-platform/domain';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { requireBinary, startFakeOpenAiServer, startNatsServer, waitUntil, type FakeOpenAiServer, type NatsServerHandle, PLATFORM_LOADER } from '@agent-platform/testkit';
import { stringify } from 'smol-toml';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

// The worker as an operator starts it (`npm start -w apps/agent-worker -- --config <file>`).
const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
let dir: string;
let child: ChildProcess | undefined;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-worker-main-'));
});
afterEach(async () => {
  if (child?.exitCode === null) child.kill('SIGKILL');
  child = undefined;
  await rm(dir, { recursive: true, force: true });
});

function start(args: string[]): { output: () => string; exited: Promise<number | null> } {
  let output = '';
  // In the test's own directory: a config file a user's `npm start` left at the repository root
  // (./agent-platform.toml, the first-run setup's) must not be found by these tests.
  child = spawn(process.execPath, ['--import', PLATFORM_LOADER, MAIN, ...args], { cwd: dir, env: { PATH: process.env.PATH } });
  child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => child?.on('exit', (code) => resolve(code)));
  return { output: () => output, exited };
}

async function writeConfig(config: Record<string, unknown>): Promise<string> {
  const path = join(dir, 'worker.toml');
  await writeFile(path, stringify({ storage: { data_dir: join(dir, 'data') }, ...config }));
  return path;
}

describe('agent-worker main', () => {
  it('refuses to start without a config file: only the all-in-one does a first run', async () => {
    const run = start([]);
    expect(await run.exited).toBe(1);
    expect(run.output()).toContain('no config file');
  });

  it('refuses the embedded bus, which no other process can reach', async () => {
    const run = start(['--config', await writeConfig({})]);
    expect(await run.exited).toBe(1);
    expect(run.output()).toContain('runtime.bus = "embedded"');
    expect(run.output()).toContain('bus = "nats"');
  });
});

const natsBinary = requireBinary('nats-server');

describe.skipIf(natsBinary === null)('agent-worker main on NATS', () => {
  let nats: NatsServerHandle;
  let provider: FakeOpenAiServer;
  let bus: NatsBus;
  beforeAll(async () => {
    nats = await startNatsServer();
    provider = await startFakeOpenAiServer({ fallback: () => ({ text: 'late but whole', delay_ms: 1_500 }) });
    bus = await connectNatsBus({ servers: nats.url });
  });
  afterAll(async () => {
    await bus?.close();
    await provider?.close();
    await nats?.dispose();
  });

  /** A worker config on NATS with the fake provider as the default model, licensed, and one Running agent. */
  async function fleetMember(options: { licensed?: boolean } = {}): Promise<{ config: string; agentId: string; license: () => Promise<void> }> {
    const keys = await generateLicenceKeyPair();
    const now = Math.floor(Date.now() / 1000);
    const claims = {
      carrier_name: 'Acme Mutual',
      carrier_id: 'acme-worker',
      iat: now - 60,
      exp: now + 86_400,
      period_start: new Date((now - 60) * 1000).toISOString(),
      period_end: new Date((now + 86_400) * 1000).toISOString(),
      providers: { local: true, managed_cloud: false },
      provider_entitlements: [{ provider_id: 'fake', budget_usd: null }],
    };
    await writeFile(join(dir, 'licence.pem'), keys.publicKeyPem);
    await writeFile(join(dir, 'licence.jwt'), await issueLicence(keys.privateKeyPem, claims));
    const document = (licensed: boolean) => ({
      runtime: { bus: 'nats', nats_url: nats.url },
      ...(licensed ? { licence: { file: join(dir, 'licence.jwt'), public_key_file: join(dir, 'licence.pem') } } : {}),
      providers: [{ id: 'fake', kind: 'openai', base_url: provider.url, models: ['m'] }],
      models: { default: 'fake/m' },
    });
    const config = await writeConfig(document(options.licensed ?? true));
    const store = await openEmbeddedStore({ path: join(dir, 'data', 'platform.db') });
    const agentId = randomUUID();
    const at = new Date().toISOString();
    await createAgentStore(store).insert({
      id: agentId,
      name: 'drain-test',
      version: '1.0.0',
      state: 'Running',
      description: 'An agent for the drain test.',
      prompt: 'You answer.',
      equipped_competencies: [],
      allow_skill_tools: [],
      allow_integration_tools: [],
      model_preference: null,
      created_at: at,
      updated_at: at,
      running_since: at,
    });
    await store.close();
    return { config, agentId, license: async () => void (await writeConfig(document(true))) };
  }

  it('serves agents.invoke, and on SIGTERM stops taking work, finishes the invocation in flight and exits 0', async () => {
    const { config, agentId } = await fleetMember();
    const run = start(['--config', config]);
    await waitUntil(() => run.output().includes('agent platform (agent-worker)'), { timeoutMs: 60_000, message: 'the boot line' });
    expect(run.output()).toContain('started: bus nats, store embedded, queue embedded');

    const request = { agent_id: agentId, source: 'Api', message: 'hello', correlation_id: 'c-drain' };
    const inFlight = bus.request<unknown, AgentInvokeReply>(Subjects.agentInvoke, request, { timeoutMs: 10_000 });
    await waitUntil(() => provider.requests.length === 1, { timeoutMs: 5_000, message: 'the provider call' });
    child?.kill('SIGTERM');

    expect((await inFlight).result.content).toBe('late but whole');
    expect(await run.exited).toBe(0);
    // Nobody serves the subject any more: a new request is refused at once, not left hanging.
    await expect(bus.request(Subjects.agentInvoke, request, { timeoutMs: 2_000 })).rejects.toMatchObject({ code: 'no_responders' });
  });

  it('re-reads the config file and the licence on SIGHUP', async () => {
    const { config, agentId, license } = await fleetMember({ licensed: false });
    const run = start(['--config', config]);
    await waitUntil(() => run.output().includes('agent platform (agent-worker)'), { timeoutMs: 60_000, message: 'the boot line' });
    const request = { agent_id: agentId, source: 'Api', message: 'hello', correlation_id: 'c-hup' };
    await expect(bus.request(Subjects.agentInvoke, request, { timeoutMs: 5_000 })).rejects.toMatchObject({
      code: 'remote',
      remote: { category: 'PermissionDenied', details: { reason: 'no_licence' } },
    });

    await license();
    child?.kill('SIGHUP');
    await waitUntil(() => run.output().includes('config reloaded (SIGHUP)'), { timeoutMs: 10_000, message: 'the reload' });
    const reply = await bus.request<unknown, AgentInvokeReply>(Subjects.agentInvoke, request, { timeoutMs: 5_000 });
    expect(reply.result.content).toBe('late but whole');
  });
});

describe.skipIf(natsBinary === null)('agent-worker main on NATS without JetStream', () => {
  let nats: NatsServerHandle;
  beforeAll(async () => {
    nats = await startNatsServer({ jetstream: false });
  });
  afterAll(async () => nats?.dispose());

  it('refuses to start, saying JetStream is needed (workflow steps are a durable stream)', async () => {
    const run = start(['--config', await writeConfig({ runtime: { bus: 'nats', nats_url: nats.url } })]);
    expect(await run.exited).toBe(1);
    expect(run.output()).toContain('JetStream is not enabled on the NATS server');
    expect(run.output()).toContain('start nats-server with -js');
  });
});
