import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, waitUntil } from '@agent-platform/testkit';
import { stringify } from 'smol-toml';
import { afterAll, describe, expect, it } from 'vitest';
import { claimsSystemPackage, ledgerClaims, startClaimsModel, startClaimsSystem, type ExampleServer } from '../support/claims-example.ts';
import { writeLicence } from '../support/fleet.ts';
import { callsFor, claimsCalls, HANDLER, type Json } from '../support/journal-kit.ts';
import { call, ROOT, startPlatform, type PlatformProcess } from '../support/platform-process.ts';
import { readmeCommands, type ReadmeCommand } from '../support/readme-shell.ts';
import { createWalkthrough, type StepResult, type Walkthrough, type WalkthroughOptions } from '../support/readme-walkthrough.ts';

// README "A kill mid-claim: what the tool-call journal does", as a user does it, on the platform
// of the section before it (the claims system and the model stand-in in their own processes, the
// integration connected, claims-handler installed, one claim opened): the section's commands run
// in order and their answers checked, kill -9 of the all-in-one while the claims system holds
// create_claim's answer, `npm start` again. Without [integrations.idempotent_keys] the run ends
// Escalated with the call unknown and no second request; with it, the re-run asks again with the
// same key and the run completes on the claim already opened.
const SECTION = 'A kill mid-claim: what the tool-call journal does';
const KILL = 'kill -9 $PID';
/** Before each kill: the reader reads the platform's pid from GET /status and pastes it. */
const KILL_PID = { status: 'curl -s -H "$H" $B/status' };
const CONTROL = 'curl -s -X POST http://127.0.0.1:4310/control';
let dir: string | undefined;
let platform: PlatformProcess | undefined;
const servers: ExampleServer[] = [];

afterAll(async () => {
  platform?.kill();
  for (const server of servers) await server.stop();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/**
 * The section's commands, but `kill -9 $PID`, which the README runner does not run, is
 * `kill(pid)` with the PID the README had the reader paste from GET /status; the commands after
 * it go on with the variables set before it.
 */
function walkthroughWithKills(commands: readonly ReadmeCommand[], options: WalkthroughOptions, kill: (pid: string) => Promise<void>): Pick<Walkthrough, 'next' | 'remaining'> {
  const parts: ReadmeCommand[][] = [[]];
  const kills: ReadmeCommand[] = [];
  for (const c of commands) {
    if (c.text.startsWith('kill -9 ')) {
      kills.push(c);
      parts.push([]);
    } else parts.at(-1)!.push(c);
  }
  let part = 0;
  let current = createWalkthrough(parts[0]!, options);
  const where = (c: ReadmeCommand): string => `${c.file}:${c.line} \`${c.text}\``;
  /** The kills not done yet, each followed by the commands after it. */
  const later = (): string[] => kills.slice(part).flatMap((k, i) => [where(k), ...parts[part + 1 + i]!.map(where)]);
  return {
    async next(expected, opts): Promise<StepResult> {
      if (!expected.startsWith('kill -9 ')) return current.next(expected, opts);
      const c = kills[part];
      if (current.remaining().length > 0 || c?.text.startsWith(expected) !== true)
        throw new Error(`the test expected '${expected}' next; the README has ${[...current.remaining(), ...later()][0] ?? 'nothing left'}`);
      await kill(current.vars.PID ?? '');
      part++;
      current = createWalkthrough(parts[part]!, { ...options, vars: current.vars });
      return { command: c, text: '' };
    },
    remaining: () => [...current.remaining(), ...later()],
  };
}

describe('README tool-call journal walkthrough against the all-in-one platform', () => {
  it('kill -9 while the claims system holds open_claim: Escalated with the key; with idempotent keys, Completed on the same claim', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ap-journal-tour-'));
    const root = dir;
    // The reader's checkout: `$PWD/examples/open-claim`.
    await cp(join(ROOT, 'examples'), join(root, 'examples'), { recursive: true });
    const ledger = join(root, 'claims-ledger.jsonl');
    // Beyond what the reader sees: every create_claim request the claims system received, with its key.
    const callsLog = join(root, 'claims-calls.jsonl');
    const claims = await startClaimsSystem(ledger, { CLAIMS_CALLS: callsLog });
    servers.push(claims);
    const model = await startClaimsModel();
    servers.push(model);
    const config = {
      server: { listen: `127.0.0.1:${await freePort()}` },
      storage: { data_dir: './.agent-platform' },
      auth: { mode: 'local' },
      network: { allow_private_targets: true },
      licence: await writeLicence(root, { provider_entitlements: [{ provider_id: 'claims-model', budget_usd: 10 }] }),
      providers: [{ id: 'claims-model', kind: 'openai', base_url: model.url, models: ['claims-demo'] }],
      models: { default: 'claims-model/claims-demo' },
    };
    await writeFile(join(root, 'agent-platform.toml'), stringify(config));
    // `npm start` at the root: ./agent-platform.toml.
    platform = startPlatform(root);
    const B = await platform.listening(90_000);
    const token: string = (await call(B, 'POST', '/auth/keys', { body: { name: 'admin', role: 'admin' } })).body.secret;

    // The section before ("An agent that acts", tests/e2e/readme-tools.test.ts): the integration
    // installed and connected, the agent installed, one message that opened CL-0001.
    const integration = await call(B, 'POST', '/integrations/install', { token, body: { name: await claimsSystemPackage(join(root, 'packages'), claims.url) } });
    expect(integration.status, integration.text).toBe(201);
    expect((await call(B, 'POST', '/integrations/claims-system/connect', { token })).status).toBe(200);
    const handler = await call(B, 'POST', '/catalog/install', { token, body: { path: HANDLER, activate: true } });
    expect(handler.status, handler.text).toBe(201);
    const AGENT: string = handler.body.installed.at(-1).id;
    const sent = await call(B, 'POST', `/agents/${AGENT}/send`, { token, body: { message: 'A burst pipe flooded my kitchen yesterday, policy HO-1234' } });
    expect(sent.body.content, sent.text).toContain('I opened claim CL-0001');

    const w = walkthroughWithKills(
      await readmeCommands(SECTION),
      {
        dir: root,
        home: root,
        addresses: { '127.0.0.1:4310': `127.0.0.1:${claims.port}` },
        vars: { B, H: `Authorization: Bearer ${token}`, AGENT },
        async startPlatform(args) {
          expect(args).toEqual([]);
          platform = startPlatform(root);
          await platform.listening(90_000);
          return platform.output();
        },
      },
      async (pid) => {
        // The README kills the process GET /status names: it must be this platform, nothing else.
        expect(pid).toBe(String(platform!.child.pid));
        platform!.kill();
        await platform!.exited;
      },
    );
    /** Waits until the claims system has recorded the claim under `key`: the request is in flight (it holds the answer). */
    const claimRecorded = (key: string) =>
      waitUntil(async () => (await ledgerClaims(ledger)).some((c) => c.idempotency_key === key), { timeoutMs: 30_000, message: `the claims system to record ${key}` });
    const toolAudit = (result: StepResult) =>
      (result.json.entries as Json[]).map((e) => [e.action, e.result, e.metadata?.idempotency_key ?? null]);

    // examples/open-claim: the agent it needs is installed already, so only the workflow is.
    const installed = await w.next('curl -s -H "$H" -X POST $B/catalog/install');
    expect(installed.json.installed).toEqual([expect.objectContaining({ type: 'workflow-template', name: 'open-claim' })]);
    await w.next('WF=', { value: installed.json.installed[0].id });

    // The first kill: the claims system is not declared to honour idempotency keys.
    await w.next(`${CONTROL} -d '{"create_delay_ms":60000}'`);
    const first = await w.next('curl -s -H "$H" -X POST $B/workflows/$WF/run');
    expect(first.status).toBe(201);
    const RUN: string = first.json.id;
    const key1 = `${RUN}:0.0:0`;
    await w.next('RUN=', { value: RUN });
    const journaled = await w.next('curl -s -H "$H" $B/runs/$RUN', { untilMs: 30_000 });
    expect(journaled.json.tool_calls).toEqual([expect.objectContaining({ step: 'open', idempotency_key: key1, tool: 'open_claim', state: 'started' })]);
    await claimRecorded(key1);
    // Point: after the claims system recorded the claim, before it answered.
    await w.next('PID=', { value: String((await w.next(KILL_PID.status)).json.pid) });
    await w.next(KILL);
    const ledger1 = await w.next('curl -s http://127.0.0.1:4310/claims');
    expect(ledger1.json.claims.map((c: Json) => [c.claim_no, c.idempotency_key])).toEqual([
      ['CL-0001', expect.stringMatching(/:0$/)],
      ['CL-0002', key1],
    ]);
    await w.next(`${CONTROL} -d '{"create_delay_ms":0}'`);
    await w.next('npm start');
    await w.next('curl -s -H "$H" $B/integrations/claims-system/status', { untilMs: 30_000 });
    const escalated = await w.next('curl -s -H "$H" $B/runs/$RUN', { untilMs: 30_000 });
    expect(escalated.json).toMatchObject({ state: 'Escalated', output: null, step_results: [] });
    expect(escalated.json.error).toContain(key1);
    expect(escalated.json.escalation).toEqual({
      step: 'open',
      calls: [expect.objectContaining({ idempotency_key: key1, tool: 'open_claim', provider_id: 'claims-system', native_tool: 'create_claim', state: 'unknown', idempotent_keys: false })],
    });
    expect(escalated.json.tool_calls).toEqual([expect.objectContaining({ step: 'open', step_key: '0.0', idempotency_key: key1, state: 'unknown', replays: 0 })]);
    // The step was not run again: the claims system was asked once, and holds one claim for the run.
    expect(callsFor(await claimsCalls(callsLog), RUN)).toEqual([expect.objectContaining({ idempotency_key: key1 })]);
    const audit1 = await w.next('curl -s -H "$H" "$B/security/audit?category=tools&limit=2"', { untilMs: 10_000 });
    expect(toolAudit(audit1)).toEqual([
      ['tool.call open_claim', 'unknown', key1],
      ['tool.call open_claim', 'started', key1],
    ]);

    // The second kill, once the config says the claims system honours idempotency keys.
    await w.next("cat >> agent-platform.toml <<'TOML'");
    await w.next('curl -s -H "$H" -X POST $B/config/reload');
    await w.next(`${CONTROL} -d '{"create_delay_ms":60000}'`);
    const second = await w.next('curl -s -H "$H" -X POST $B/workflows/$WF/run');
    expect(second.status).toBe(201);
    const RUN2: string = second.json.id;
    const key2 = `${RUN2}:0.0:0`;
    await w.next('RUN2=', { value: RUN2 });
    const journaled2 = await w.next('curl -s -H "$H" $B/runs/$RUN2', { untilMs: 30_000 });
    expect(journaled2.json.tool_calls).toEqual([expect.objectContaining({ idempotency_key: key2, state: 'started', idempotent_keys: true })]);
    await claimRecorded(key2);
    await w.next('PID=', { value: String((await w.next(KILL_PID.status)).json.pid) });
    await w.next(KILL);
    await w.next(`${CONTROL} -d '{"create_delay_ms":0}'`);
    await w.next('npm start');
    await w.next('curl -s -H "$H" $B/integrations/claims-system/status', { untilMs: 30_000 });
    const completed = await w.next('curl -s -H "$H" $B/runs/$RUN2', { untilMs: 30_000 });
    expect(completed.json.state).toBe('Completed');
    expect(completed.json.escalation).toBeUndefined();
    expect(completed.json.tool_calls).toEqual([
      expect.objectContaining({ step: 'open', idempotency_key: key2, tool: 'open_claim', state: 'answered', is_error: false, idempotent_keys: true, replays: 0 }),
    ]);
    // Asked twice under one key, opened once: the second answer was the claim already opened
    // ("repeated": true), which the model reported.
    expect(callsFor(await claimsCalls(callsLog), RUN2).map((c) => c.idempotency_key)).toEqual([key2, key2]);
    expect(completed.json.output).toContain('I opened claim CL-0003');
    const ledger2 = await w.next('curl -s http://127.0.0.1:4310/claims');
    expect(ledger2.json.claims.map((c: Json) => [c.claim_no, c.idempotency_key])).toEqual([
      ['CL-0001', expect.stringMatching(/:0$/)],
      ['CL-0002', key1],
      ['CL-0003', key2],
    ]);
    // Newest first: the call made again with its key and answered, the read before it, the cut-off call.
    const audit2 = await w.next('curl -s -H "$H" "$B/security/audit?category=tools&limit=5"');
    expect(toolAudit(audit2)).toEqual([
      ['tool.call open_claim', 'success', key2],
      ['tool.call open_claim', 'started', key2],
      ['tool.call lookup_policy', 'success', null],
      ['tool.call open_claim', 'unknown', key2],
      ['tool.call open_claim', 'started', key2],
    ]);
    expect(w.remaining()).toEqual([]);
  }, 240_000);
});
