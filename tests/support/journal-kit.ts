import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startFakeOpenAiServer, waitUntil, type FakeOpenAiServer, type FakeReply, type RecordedRequest } from '@agent-platform/testkit';
import { stringify } from 'smol-toml';
import { expect } from 'vitest';
import { claimsSystemPackage, startClaimsSystem, type ExampleServer } from './claims-example.ts';
import { writeLicence } from './fleet.ts';
import { call, ROOT, startPlatform, type PlatformProcess } from './platform-process.ts';

/**
 * What the tool-call journal tests share (docs/tools.md "The tool-call journal"): the example
 * claims system counting every create_claim request per key (`--calls`), a model stand-in that
 * looks the policy up, opens a claim and reports it, and the packages (the claims-system
 * integration, the claims-handler agent, one-step workflows around it).
 */
export const HANDLER = join(ROOT, 'examples/claims-handler');
export const CLAIM_INPUT = (tag: string): string => `open a claim for policy HO-1234: hail broke the roof (${tag})`;

/** One create_claim request as the claims system received it. */
export interface ClaimsCall {
  tool: string;
  idempotency_key: string | null;
}

/** Every create_claim request the claims system received, in order. */
export async function claimsCalls(file: string): Promise<ClaimsCall[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as ClaimsCall);
}

/** The requests whose user message contains `tag`: one logical invocation or step. */
export function callsFor(calls: ClaimsCall[], prefix: string): ClaimsCall[] {
  return calls.filter((c) => c.idempotency_key?.startsWith(prefix) === true);
}

/** Sets how long the claims system holds create_claim's answer after recording the claim. */
export async function setClaimsDelay(claimsUrl: string, createDelayMs: number): Promise<void> {
  const res = await fetch(claimsUrl.replace(/\/mcp$/, '/control'), { method: 'POST', body: JSON.stringify({ create_delay_ms: createDelayMs }) });
  expect(res.status).toBe(200);
}

/** How the model stand-in behaves; tests flip these between phases. */
export interface ClaimsModelKnobs {
  /** The final reply (after both tool results) waits this long: a kill can land while the model writes it. */
  finalDelayMs: number;
  /** This many final replies fail (HTTP 400, a ProviderError): the step or invocation fails after its calls. */
  failFinal: number;
  /** Appended, one per open_claim the model decides on, to the loss description: a re-run that decides otherwise. */
  variants: string[];
}

export function claimsModelKnobs(): ClaimsModelKnobs {
  return { finalDelayMs: 0, failFinal: 0, variants: [] };
}

/** The last user message and the tool results that followed it. */
export function conversationOf(request: RecordedRequest): { message: string; results: string[] } {
  const messages = (request.body?.messages ?? []) as Array<{ role: string; content: string | null }>;
  const lastUser = messages.map((m) => m.role).lastIndexOf('user');
  return {
    message: String(messages[lastUser]?.content ?? ''),
    results: messages.slice(lastUser + 1).filter((m) => m.role === 'tool').map((m) => String(m.content)),
  };
}

/** Looks the policy up, opens a claim when asked to, then reports what the tools said. */
export function claimsReply(knobs: Partial<ClaimsModelKnobs>): (request: RecordedRequest) => FakeReply {
  return (request) => {
    const { message, results } = conversationOf(request);
    const policy = /\b[A-Z]{2}-\d{3,}\b/.exec(message)?.[0] ?? 'HO-1234';
    if (results.length === 0) return { tool_calls: [{ name: 'lookup_policy', arguments: { policy_number: policy } }] };
    if (results.length === 1 && /\bopen\b/i.test(message)) {
      return { tool_calls: [{ name: 'open_claim', arguments: { policy_number: policy, description: `${message}${knobs.variants?.shift() ?? ''}` } }] };
    }
    if ((knobs.failFinal ?? 0) > 0) {
      knobs.failFinal = (knobs.failFinal ?? 0) - 1;
      return { status: 400, message: 'the model could not write its reply' };
    }
    return { text: `tools said: ${results.join(' | ')}`, ...((knobs.finalDelayMs ?? 0) > 0 ? { delay_ms: knobs.finalDelayMs } : {}) };
  };
}

/** Model requests made for the user message containing `tag` (every round of every execution). */
export function modelRequestsFor(requests: readonly RecordedRequest[], tag: string): RecordedRequest[] {
  return requests.filter((r) => conversationOf(r).message.includes(tag));
}

/** A one-step workflow around the claims handler, written as a package under `dir`. */
export async function writeClaimWorkflow(
  dir: string,
  name: string,
  step: { timeout_secs?: number; error_mode?: unknown } = {},
): Promise<string> {
  const wfDir = join(dir, name);
  await mkdir(join(wfDir, 'payload'), { recursive: true });
  await writeFile(
    join(wfDir, 'package.toml'),
    `[package]\ntype = "workflow-template"\nname = "${name}"\ntitle = "Open a claim"\nversion = "1.0.0"\ndescription = "Opens a claim."\nlicense = "Apache-2.0"\nmin_platform_version = "0.1.0"\n`,
  );
  await writeFile(
    join(wfDir, 'payload', 'workflow.json'),
    JSON.stringify({ description: 'Opens a claim.', agents_required: ['claims-handler'], steps: [{ name: 'open', agent: 'claims-handler', prompt_template: '{{input}}', ...step }] }),
  );
  return wfDir;
}

/**
 * Installs and connects the claims-system integration (at `claimsUrl`; with `idempotentKeys`, its
 * manifest declares `[standards] idempotent_keys = true`) and the claims-handler agent; returns the agent id.
 */
export async function installClaimsHandler(base: string, token: string | undefined, packagesDir: string, claimsUrl: string, idempotentKeys = false): Promise<string> {
  const auth = token === undefined ? {} : { token };
  await mkdir(packagesDir, { recursive: true });
  const pkg = await claimsSystemPackage(packagesDir, claimsUrl);
  if (idempotentKeys) await appendFile(join(pkg, 'package.toml'), '\n[standards]\nidempotent_keys = true\n');
  const installed = await call(base, 'POST', '/integrations/install', { ...auth, body: { name: pkg } });
  expect(installed.status, JSON.stringify(installed.body)).toBe(201);
  const connected = await call(base, 'POST', '/integrations/claims-system/connect', auth);
  expect(connected.status, JSON.stringify(connected.body)).toBe(200);
  const handler = await call(base, 'POST', '/catalog/install', { ...auth, body: { path: HANDLER, activate: true } });
  expect(handler.status, JSON.stringify(handler.body)).toBe(201);
  return handler.body.installed.at(-1).id as string;
}

/** Installs a workflow package; returns its id. */
export async function installWorkflow(base: string, token: string | undefined, path: string): Promise<string> {
  const wf = await call(base, 'POST', '/catalog/install', { ...(token === undefined ? {} : { token }), body: { path } });
  expect(wf.status, JSON.stringify(wf.body)).toBe(201);
  return wf.body.installed.at(-1).id as string;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON shapes
export type Json = any;

/** Waits for the run to reach a terminal state (any api node answering), and returns it. */
export async function waitRunEnded(base: () => string, token: string | undefined, runId: string, timeoutMs = 60_000): Promise<Json> {
  let run: Json;
  await waitUntil(
    async () => {
      run = (await call(base(), 'GET', `/runs/${runId}`, token === undefined ? {} : { token }).catch((error: unknown) => ({ body: { unreachable: String(error) } }))).body;
      return ['Completed', 'Failed', 'Escalated'].includes(run?.state);
    },
    { timeoutMs, message: `run ${runId} to end` },
  ).catch((error: unknown) => {
    throw new Error(`${(error as Error).message}: ${JSON.stringify(run)}`);
  });
  return run;
}

/**
 * The all-in-one platform with the claims system and the model stand-in, as the journal tests use
 * it: a config file of its own (an OpenAI-protocol provider, short leases), the claims-handler
 * agent installed and its integration connected. `start(env)` (re)starts the process, e.g. with
 * `AP_FAULT_STOP_AT`; `kill()` is kill -9.
 */
export interface JournalPlatform {
  readonly dir: string;
  readonly model: FakeOpenAiServer;
  readonly claims: ExampleServer;
  readonly knobs: ClaimsModelKnobs;
  readonly agentId: string;
  readonly ledger: string;
  readonly callsLog: string;
  readonly packages: string;
  platform: PlatformProcess;
  base: string;
  start(env?: Record<string, string>): Promise<void>;
  kill(): Promise<void>;
  close(): Promise<void>;
}

export async function startJournalPlatform(
  prefix: string,
  options: { config?: Record<string, Record<string, unknown>>; manifestIdempotentKeys?: boolean } = {},
): Promise<JournalPlatform> {
  const config = options.config ?? {};
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const knobs = claimsModelKnobs();
  const model = await startFakeOpenAiServer({ fallback: claimsReply(knobs) });
  const ledger = join(dir, 'claims-ledger.jsonl');
  const callsLog = join(dir, 'claims-calls.jsonl');
  const claims = await startClaimsSystem(ledger, { CLAIMS_CALLS: callsLog });
  const configPath = join(dir, 'agent-platform.toml');
  const document = {
    server: { listen: `127.0.0.1:${await freePort()}` },
    storage: { data_dir: join(dir, 'data') },
    licence: await writeLicence(dir, {}),
    providers: [{ id: 'fake', kind: 'openai', base_url: model.url, models: ['m'] }],
    models: { default: 'fake/m' },
    network: { allow_private_targets: true },
    logging: { level: 'warn' },
    ...config,
    workflows: { lease_secs: 2, retry_backoff_ms: 200, ...config['workflows'] },
    agents: { claim_lease_secs: 2, ...config['agents'] },
  };
  await writeFile(configPath, stringify(document));
  const bench: JournalPlatform = {
    dir,
    model,
    claims,
    knobs,
    ledger,
    callsLog,
    packages: join(dir, 'packages'),
    agentId: '',
    platform: startPlatform(dir, ['--config', configPath]),
    base: '',
    async start(env = {}) {
      bench.platform = startPlatform(dir, ['--config', configPath], env);
      // No wait for the integration to reconnect: a request right after the restart, as a
      // client's retry is, waits for it in the platform (integration-host `tools`).
      bench.base = await bench.platform.listening(90_000);
    },
    async kill() {
      bench.platform.kill();
      await bench.platform.exited;
    },
    async close() {
      bench.platform.kill();
      await claims.stop();
      await model.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
  bench.base = await bench.platform.listening(90_000);
  (bench as { agentId: string }).agentId = await installClaimsHandler(bench.base, undefined, bench.packages, claims.url, options.manifestIdempotentKeys === true);
  return bench;
}

/** Waits until `process` printed that it stopped at fault point `point` (engines faultPointsFromEnv). */
export async function stoppedAt(output: () => string, point: string): Promise<void> {
  await waitUntil(() => output().includes(`fault point ${point} reached`), { timeoutMs: 30_000, message: `the process to stop at ${point}` }).catch((error: unknown) => {
    throw new Error(`${(error as Error).message}:\n${output()}`);
  });
}
