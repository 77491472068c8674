import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createPlatformClient, unwrap } from '@agent-platform/client';
import { freePort } from '@agent-platform/testkit';
import { stringify } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTour, type TourResult } from '../../libs/client/examples/tour.ts';
import type { OpenApiDocument } from '../../scripts/client/api-document.ts';
import { documentConfig } from '../../scripts/client/document-config.ts';
import { describeDrift } from '../../scripts/client/drift.ts';
import { CLIENT_FILES, GENERATE_COMMAND, ROOT } from '../../scripts/client/paths.ts';
import { writeLicence } from '../support/fleet.ts';
import { startPlatform, type PlatformProcess } from '../support/platform-process.ts';
import { responseChecker, type ResponseChecker } from './response-checker.ts';

// The typed client (libs/client) against a running all-in-one platform, as an integrator uses
// it: the platform serves the document the client was generated from, the example tour works
// end to end (in this process, and as `tsx libs/client/examples/tour.ts` with AP_URL and
// AP_KEY), and every response the tour received matches the document's schema for it.
const EXAMPLE = join(ROOT, 'libs/client/examples/tour.ts');
const TSX_LOADER = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const MESSAGE = 'Water damage in the kitchen, policy HO-1234';

let dir: string;
let platform: PlatformProcess;
let base: string;
let committed: OpenApiDocument;
let checker: ResponseChecker;
let tour: TourResult;
const lines: string[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-client-'));
  const configPath = join(dir, 'agent-platform.toml');
  const config = {
    server: { listen: `127.0.0.1:${await freePort()}` },
    storage: { data_dir: join(dir, 'data') },
    auth: { mode: 'local' },
    // The surfaces the document was generated with (every optional one of the api listener).
    surfaces: documentConfig().surfaces,
    licence: await writeLicence(dir, {}),
  };
  await writeFile(configPath, stringify(config));
  platform = startPlatform(dir, ['--config', configPath]);
  // 60 s, as the other platform tests: a first boot on a loaded machine (the clean-clone CI) took over 30.
  base = await platform.listening(60_000);
  committed = JSON.parse(await readFile(join(ROOT, CLIENT_FILES.document), 'utf8')) as OpenApiDocument;
  checker = responseChecker(committed);
  // No token: the tour creates the first key, as on a fresh platform.
  tour = await runTour({ baseUrl: base, log: (line) => lines.push(line), middleware: [checker.middleware] });
}, 120_000);

afterAll(async () => {
  platform?.kill();
  await platform?.exited;
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('the generated client against a running platform', () => {
  it('is generated from the document the running platform serves', async () => {
    const client = createPlatformClient({ baseUrl: base, token: tour.token });
    const { response } = await client.GET('/health');
    expect(response.headers.get('api-version')).toBe('v1');
    const served = (await fetch(`${base}/openapi.json`, {
      headers: { authorization: `Bearer ${tour.token}` },
    }).then((r) => r.json())) as OpenApiDocument;
    const drift = describeDrift(committed, served);
    expect(
      drift,
      `${CLIENT_FILES.document} differs from GET /openapi.json of a running platform: run \`${GENERATE_COMMAND}\``,
    ).toEqual([]);
  });

  it('runs the example tour: first key, install, agents, a message, a workflow run polled to the end, the audit trail', () => {
    expect(tour.keyCreated).toBe(true);
    expect(tour.token).toMatch(/^svc_sk_/);
    expect(tour.identity).toBe('client-example');
    expect(tour.installed.map((p) => p.name)).toEqual(
      expect.arrayContaining(['loss-summary', 'fnol-triage', 'claims-intake', 'policy-servicing']),
    );
    expect(tour.installed.at(-1)).toMatchObject({
      type: 'workflow-template',
      name: 'claims-review',
      status: 'installed',
    });
    expect(tour.agents.map((a) => a.name).sort()).toEqual(['claims-intake', 'policy-servicing']);
    expect(tour.agents.every((a) => a.state === 'Running')).toBe(true);
    expect(tour.reply).toBe(MESSAGE);
    expect(tour.run.state).toBe('Completed');
    expect(tour.run.steps).toEqual(['summarise', 'coverage-check', 'fraud-screen', 'findings', 'recommend']);
    expect(tour.audit).toEqual({ entries: 5, chainValid: true });
    expect(lines).toContain(`claims-intake replied: ${MESSAGE} (22 tokens)`);
    expect(lines.find((l) => l.startsWith('created the first key'))).toMatch(
      /^created the first key: client-example \(admin\), prefix svc_sk_/,
    );
    // The printed output never carries the secret.
    expect(lines.join('\n')).not.toContain(tour.token);
  });

  it('surfaces both error shapes typed: the envelope and the flat 403 role refusal', () => {
    expect(tour.notFound).toMatchObject({ status: 404, category: 'NotFound', flat: false });
    expect(tour.notFound.message).toMatch(/agent .* not found/i);
    expect(tour.notFound.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(tour.roleRefusal).toMatchObject({
      status: 403,
      category: 'forbidden',
      flat: true,
      isRoleRefusal: true,
    });
    expect(tour.roleRefusal.message).toBe('role viewer may not perform AgentSendMessage');
    expect(tour.roleRefusal.body).toEqual({
      error: 'forbidden',
      message: 'role viewer may not perform AgentSendMessage',
    });
    expect(lines).toContain('GET an unknown agent without unwrap: 404 NotFound');
  });

  it('received only responses the document declares, each matching its schema', () => {
    const checked = checker.checked();
    const wrong = checked
      .filter((c) => c.problems.length > 0)
      .map((c) => `${c.operation} ${c.status}: ${c.problems.join('; ')}`);
    expect(wrong).toEqual([]);
    const operations = new Set(checked.map((c) => `${c.operation} ${c.status}`));
    for (const expected of [
      'GET /health 200',
      'POST /auth/keys 200',
      'GET /auth/whoami 200',
      'POST /catalog/install 201',
      'GET /agents 200',
      'POST /agents/{id}/send 200',
      'POST /workflows/{id}/run 201',
      'GET /runs/{id} 200',
      'GET /security/audit 200',
      'GET /security/verify 200',
      'GET /agents/{id} 404',
      'POST /agents/{id}/send 403',
      'DELETE /auth/keys/{id} 200',
    ]) {
      expect(operations, expected).toContain(expected);
    }
  });

  it('errors that no route declares still reach the caller in the spec shape (401 for a bad key)', async () => {
    const stranger = createPlatformClient({ baseUrl: base, token: 'svc_sk_not-a-key' });
    const error = await unwrap(stranger.GET('/agents')).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({
      name: 'PlatformApiError',
      status: 401,
      category: 'AuthError',
      flat: false,
    });
  });

  it('reads the text routes with parseAs, as docs/client.md says: metrics and a run event stream', async () => {
    const client = createPlatformClient({ baseUrl: base, token: tour.token });
    const metrics = await unwrap(client.GET('/metrics', { parseAs: 'text' }));
    expect(metrics).toContain('http_requests_total');
    const events = await unwrap(
      client.GET('/runs/{id}/events', { params: { path: { id: tour.run.id } }, parseAs: 'text' }),
    );
    expect(events).toMatch(/^event: run$/m);
    expect(events).toMatch(/^event: end$/m);
  });

  it('runs as a program with AP_URL and AP_KEY, printing the tour', async () => {
    const child = spawn(process.execPath, ['--import', TSX_LOADER, EXAMPLE], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', AP_URL: base, AP_KEY: tour.token },
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code, output).toBe(0);
    const printed = output.trim().split('\n');
    expect(printed[0]).toMatch(/^health: ok \(platform \d+\.\d+\.\d+\)$/);
    expect(printed).not.toContainEqual(expect.stringMatching(/^created the first key/));
    expect(printed).toContain('signed in as client-example (admin)');
    // Installed again: the same versions are reported unchanged.
    expect(printed).toContainEqual(
      expect.stringMatching(/workflow-template claims-review 1\.0\.0 \(unchanged\)$/),
    );
    expect(printed).toContain(`claims-intake replied: ${MESSAGE} (22 tokens)`);
    expect(printed).toContainEqual(
      expect.stringMatching(
        /^run [0-9a-f-]{36}: Completed after \d+ polls; steps summarise, coverage-check, fraud-screen, findings, recommend$/,
      ),
    );
    expect(printed).toContainEqual(expect.stringMatching(/^audit chain valid: true \(\d+ entries\)$/));
    expect(printed).toContain(
      'a viewer sending a message: 403 forbidden (role refusal): role viewer may not perform AgentSendMessage',
    );
    expect(printed.at(-1)).toBe('revoked the viewer key');
  });
});
