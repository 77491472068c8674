// The typed client, end to end: run against a platform you started (`npm start`) with
//
//   AP_URL=http://127.0.0.1:4200 AP_KEY=svc_sk_... npm run example -w libs/client
//
// Without AP_KEY it creates the first admin key, which only an empty key store allows
// (docs/auth.md), and prints its secret once at the end. It installs examples/claims-review
// (two agents and a workflow), lists the agents, sends one a message, runs the workflow and
// polls it to completion, reads the audit trail, and shows both error shapes.
// tests/client/example.test.ts runs it against a real platform in CI.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Middleware } from 'openapi-fetch';
import { PlatformApiError, createPlatformClient, unwrap, type PlatformClient } from '../src/index.ts';

export interface TourOptions {
  /** The api, e.g. `http://127.0.0.1:4200`. */
  baseUrl: string;
  /** An admin key's secret; absent: create the first key (empty key store only). */
  token?: string;
  /** The repository's `examples/` directory, absolute, on the platform's machine. */
  examplesDir?: string;
  /** Where the tour writes what it does; default stdout. */
  log?: (line: string) => void;
  /** Passed to every client the tour makes (tests validate each response against the document). */
  middleware?: Middleware[];
  /** How long to wait for the workflow run to end; default 60 s. */
  runTimeoutMs?: number;
}

/** What the tour saw, for callers that check it. */
export interface TourResult {
  /** The key the tour used: the one given, or the one it created (its secret). */
  token: string;
  keyCreated: boolean;
  identity: string;
  installed: { type: string; name: string; id: string; status: string }[];
  agents: { id: string; name: string; state: string }[];
  reply: string;
  run: { id: string; state: string; steps: string[]; polls: number };
  audit: { entries: number; chainValid: boolean };
  notFound: PlatformApiError;
  roleRefusal: PlatformApiError;
}

const RUN_ENDED = new Set(['Completed', 'Failed', 'Escalated']);
const MESSAGE = 'Water damage in the kitchen, policy HO-1234';

export async function runTour(options: TourOptions): Promise<TourResult> {
  const log = options.log ?? ((line: string) => console.log(line));
  const examplesDir = options.examplesDir ?? fileURLToPath(new URL('../../../examples/', import.meta.url));
  const connect = (token?: string): PlatformClient =>
    createPlatformClient({
      baseUrl: options.baseUrl,
      ...(token === undefined ? {} : { token }),
      ...(options.middleware ? { middleware: options.middleware } : {}),
    });

  // GET /health needs no credential.
  const health = await unwrap(connect().GET('/health'));
  log(`health: ${health.status} (platform ${health.version})`);

  // Use the given key, or create the first one: the body is typed (name, role, expires_in).
  let token = options.token;
  const keyCreated = token === undefined;
  if (token === undefined) {
    const key = await unwrap(
      connect().POST('/auth/keys', { body: { name: 'client-example', role: 'admin' } }),
    );
    log(`created the first key: ${key.name} (${key.role}), prefix ${key.prefix}`);
    token = key.secret;
  }
  const client = connect(token);
  const me = await unwrap(client.GET('/auth/whoami'));
  log(`signed in as ${me.identity} (${me.role})`);

  // Install an example package: its dependencies first, the workflow last.
  const { installed } = await unwrap(
    client.POST('/catalog/install', { body: { path: join(examplesDir, 'claims-review'), activate: true } }),
  );
  log(`installed: ${installed.map((p) => `${p.type} ${p.name} ${p.version} (${p.status})`).join(', ')}`);

  const { agents } = await unwrap(client.GET('/agents'));
  log(`agents: ${agents.map((a) => `${a.name} (${a.state})`).join(', ')}`);
  const intake = agents.find((a) => a.name === 'claims-intake');
  if (intake === undefined) throw new Error('claims-intake is not installed');

  // Send a message; the built-in `local` model echoes it.
  const reply = await unwrap(
    client.POST('/agents/{id}/send', { params: { path: { id: intake.id } }, body: { message: MESSAGE } }),
  );
  log(`claims-intake replied: ${reply.content} (${reply.tokens_used} tokens)`);

  // Run the workflow and poll it until it ends.
  const workflow = installed.find((p) => p.type === 'workflow-template');
  if (workflow === undefined) throw new Error('the workflow was not installed');
  const started = await unwrap(
    client.POST('/workflows/{id}/run', {
      params: { path: { id: workflow.id } },
      body: { input: 'Burst pipe flooded the kitchen, policy HO-1234' },
    }),
  );
  log(`run ${started.id} of ${started.workflow_name}: ${started.state}`);
  let run = started;
  let polls = 0;
  const deadline = Date.now() + (options.runTimeoutMs ?? 60_000);
  while (!RUN_ENDED.has(run.state)) {
    if (Date.now() > deadline)
      throw new Error(`run ${run.id} still ${run.state} after ${options.runTimeoutMs ?? 60_000} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    run = await unwrap(client.GET('/runs/{id}', { params: { path: { id: started.id } } }));
    polls += 1;
  }
  const steps = run.step_results.map((step) => step.step_name);
  log(`run ${run.id}: ${run.state} after ${polls} polls; steps ${steps.join(', ')}`);

  // The audit trail: the latest entries, and the hash chain verified.
  const { entries } = await unwrap(client.GET('/security/audit', { params: { query: { limit: 5 } } }));
  for (const entry of entries)
    log(`audit #${entry.seq} ${entry.identity} ${entry.action} ${entry.target} -> ${entry.result}`);
  const verified = await unwrap(client.GET('/security/verify'));
  // The document's union: a verification, or `{status: "disabled"}` when [audit] enabled = false.
  if (!('valid' in verified)) throw new Error(`the audit trail is ${verified.status}: ${verified.reason}`);
  log(`audit chain valid: ${verified.valid} (${verified.entry_count} entries)`);

  // Errors, the envelope: `{data, error, response}` without unwrap, then the same as a throw.
  const missing = await client.GET('/agents/{id}', { params: { path: { id: randomUUID() } } });
  if (missing.error !== undefined)
    log(`GET an unknown agent without unwrap: ${missing.response.status} ${missing.error.error.category}`);
  const notFound = await failure(
    unwrap(client.GET('/agents/{id}', { params: { path: { id: randomUUID() } } })),
  );
  log(`GET an unknown agent: ${notFound.status} ${notFound.category}: ${notFound.message}`);

  // Errors, the flat 403: a viewer key may read agents but not send them messages.
  const viewerKey = await unwrap(
    client.POST('/auth/keys', { body: { name: 'client-example-viewer', role: 'viewer', expires_in: '1h' } }),
  );
  const viewer = connect(viewerKey.secret);
  const roleRefusal = await failure(
    unwrap(
      viewer.POST('/agents/{id}/send', { params: { path: { id: intake.id } }, body: { message: MESSAGE } }),
    ),
  );
  log(
    `a viewer sending a message: ${roleRefusal.status} ${roleRefusal.category}${roleRefusal.isRoleRefusal ? ' (role refusal)' : ''}: ${roleRefusal.message}`,
  );
  await unwrap(client.DELETE('/auth/keys/{id}', { params: { path: { id: viewerKey.id } } }));
  log('revoked the viewer key');

  return {
    token,
    keyCreated,
    identity: me.identity,
    installed: installed.map(({ type, name, id, status }) => ({ type, name, id, status })),
    agents: agents.map(({ id, name, state }) => ({ id, name, state })),
    reply: reply.content,
    run: { id: run.id, state: run.state, steps, polls },
    audit: { entries: entries.length, chainValid: verified.valid },
    notFound,
    roleRefusal,
  };
}

/** The PlatformApiError a call must fail with. */
async function failure(call: Promise<unknown>): Promise<PlatformApiError> {
  try {
    await call;
  } catch (error) {
    if (error instanceof PlatformApiError) return error;
    throw error;
  }
  throw new Error('the call succeeded but was expected to fail');
}

// Run directly (not imported by a test): read the platform from the environment.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await runTour({
    baseUrl: process.env.AP_URL ?? 'http://127.0.0.1:4200',
    ...(process.env.AP_KEY ? { token: process.env.AP_KEY } : {}),
  });
  // The tour's own lines never carry a secret; but a key it created is of no use unless you keep
  // it, and the platform shows it only once, so it is printed here, once, for you to keep.
  if (result.keyCreated)
    console.log(`the admin key created above, shown once (keep it): export AP_KEY=${result.token}`);
}
