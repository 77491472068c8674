import { corpusMessage, leakedValues } from '@agent-platform/privacy/testing';
import {
  gate,
  requireBinary,
  waitUntil,
  type FakeReply,
  type RecordedRequest,
} from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoReply, pidOwningPort, startFleet, type AppProcess, type Fleet } from '../support/fleet.ts';
import { call } from '../support/platform-process.ts';

// Issue 13 item 2 in a fleet: the api node and two agent workers are separate processes on NATS,
// the model stand-in (an OpenAI-protocol server that echoes the tokens it gets) records every
// request. No value of the personal-data corpus may reach it; the replies carry the values; the
// routing decisions the workers wrote are visible through the api node; and a worker SIGKILLed
// while the stand-in holds a tokenised request leaves the compliance figures consistent with the
// audit trail: that request counts as tokenised and never hydrated (docs/privacy-gateway.md).
const natsBinary = requireBinary('nats-server');
const redisBinary = requireBinary('redis-server');

let held = gate();

/** The stand-in: an echo of the last user message; one starting `hold:` waits for the test. */
function reply(recorded: RecordedRequest): FakeReply {
  const answer = echoReply(recorded);
  const text = 'text' in answer ? (answer.text ?? '') : '';
  return text.startsWith('hold:') ? { ...answer, hold: held.promise } : answer;
}

describe.skipIf(natsBinary === null || redisBinary === null)(
  'a fleet: the privacy gateway at the agent workers',
  () => {
    let fleet: Fleet;
    let api: string;
    let token: string;
    let agent: string;

    beforeAll(async () => {
      fleet = await startFleet({
        apis: 1,
        workers: 2,
        schedulers: 0,
        reply,
        config: { agents: { invocation_timeout_secs: 30 } },
      });
      api = fleet.urls[0]!;
      token = (await call(api, 'POST', '/auth/keys', { body: { name: 'admin', role: 'admin' } })).body.secret;
      const claimsIntake = new URL('../../examples/claims-intake', import.meta.url).pathname;
      const install = await call(api, 'POST', '/catalog/install', {
        token,
        body: { path: claimsIntake, activate: true },
      });
      expect(install.status).toBe(201);
      agent = install.body.installed[2].id;
    }, 180_000);

    afterAll(async () => {
      held.open();
      await fleet?.close();
    });

    const sentToModel = () => JSON.stringify(fleet.provider.requests.map((r) => r.body));
    const figures = async () => ({
      coverage: (await call(api, 'GET', '/compliance/pii-coverage', { token })).body,
      routing: (await call(api, 'GET', '/compliance/forced-local-routing', { token })).body,
    });
    /** The figures counted from the audit trail itself (GET /security/audit, category privacy). */
    const recount = async () => {
      const entries = (await call(api, 'GET', '/security/audit?category=privacy&limit=1000', { token })).body
        .entries as Array<{ action: string }>;
      return {
        tokenised: entries.filter((e) => e.action === 'gateway.pii.tokenised').length,
        hydrated: entries.filter((e) => e.action === 'gateway.pii.hydrated').length,
      };
    };

    it('sends the stand-in tokens only, answers with the values, and shows the decisions through the api node', async () => {
      const message = corpusMessage();
      const sent = await call(api, 'POST', `/agents/${agent}/send`, { token, body: { message } });
      expect(sent.status, sent.text).toBe(200);
      expect(sent.body.content).toBe(message);
      const invoked = await call(api, 'POST', `/agents/${agent}/invoke`, {
        token,
        body: { source: 'Api', message, correlation_id: 'fleet-corpus' },
      });
      expect(invoked.body.content).toBe(message);
      expect(fleet.provider.requests.length).toBeGreaterThanOrEqual(2);
      expect(leakedValues(sentToModel())).toEqual([]);

      const traffic = await call(api, 'GET', '/gateway/traffic?limit=10', { token });
      expect(traffic.status).toBe(200);
      expect(traffic.body.decisions.slice(0, 2)).toEqual([
        expect.objectContaining({
          correlation_id: 'fleet-corpus',
          provider: 'fake',
          pii_detected: true,
          tokenised: true,
          hydrated: true,
          outcome: 'ok',
        }),
        expect.objectContaining({
          provider: 'fake',
          pii_detected: true,
          tokenised: true,
          hydrated: true,
          outcome: 'ok',
        }),
      ]);
      expect(leakedValues(traffic.text)).toEqual([]);
      const pools = await call(api, 'GET', '/gateway/pools', { token });
      expect(pools.body.pools[1]).toMatchObject({
        pool: 'cloud',
        providers: [{ id: 'fake', default: true, health: { status: 'ok' } }],
      });
      expect(await figures()).toEqual({
        coverage: { coverage_pct: 100, tokenised: 2, hydrated: 2 },
        routing: { forced_local: 0, local_eligible: 0, pct_of_local_eligible: null, target_pct: 85 },
      });
    });

    it('after a SIGKILL of the worker holding a tokenised request, the re-dispatch completes and the figures match the trail', async () => {
      held = gate();
      const before = await figures();
      const message = `hold: ${corpusMessage()}`;
      const body = { source: 'Api', message, correlation_id: 'fleet-kill', idempotency_key: 'gateway-kill' };
      const first = call(api, 'POST', `/agents/${agent}/invoke`, { token, body });
      await waitUntil(() => heldCalls(fleet).length === 1, {
        timeoutMs: 15_000,
        message: 'the tokenised request to reach the stand-in',
      });
      // The routing and tokenised entries are written before the request leaves the worker.
      expect(await recount()).toEqual({
        tokenised: before.coverage.tokenised + 1,
        hydrated: before.coverage.hydrated,
      });
      const owner = await workerHolding(fleet);
      await owner.kill();
      fleet.workers[fleet.workers.indexOf(owner)] = await fleet.add('agent-worker');
      held.open();

      // The api notices the dead worker and sends the invocation again under the same key, which the
      // next run takes once the dead worker's claim lapses ([agents] claim_lease_secs): the first
      // request itself is answered.
      const answered = await first;
      expect(answered.status, JSON.stringify(answered.body)).toBe(200);
      expect(answered.body.content).toBe(message);
      expect(leakedValues(sentToModel())).toEqual([]);

      // The killed request counts as tokenised and never hydrated; the re-dispatch as one of each.
      const after = await figures();
      const tokenised = before.coverage.tokenised + 2;
      const hydrated = before.coverage.hydrated + 1;
      expect(after.coverage).toEqual({ coverage_pct: (hydrated / tokenised) * 100, tokenised, hydrated });
      expect(await recount()).toEqual({ tokenised, hydrated });
      const decisions = (await call(api, 'GET', '/gateway/traffic?limit=50', { token })).body
        .decisions as Array<{ correlation_id: string; outcome: string; tokenised: boolean }>;
      expect(
        decisions
          .filter((d) => d.correlation_id === 'fleet-kill')
          .map((d) => d.outcome)
          .sort(),
      ).toEqual(['ok', 'pending']);

      // Nothing of the corpus in the whole audit trail or in any process's output.
      const trail = await call(api, 'GET', '/security/audit?limit=1000', { token });
      expect(leakedValues(trail.text)).toEqual([]);
      expect(leakedValues(fleet.logs())).toEqual([]);
    });
  },
);

/** The model calls of the held request (its last user message starts `hold:`, tokens and all). */
function heldCalls(fleet: Fleet): RecordedRequest[] {
  return fleet.provider.requests.filter((r) =>
    String(r.body?.messages?.at(-1)?.content ?? '').startsWith('hold:'),
  );
}

/** The worker process that made the held call: the one owning its client port. */
async function workerHolding(fleet: Fleet): Promise<AppProcess> {
  const recorded = heldCalls(fleet)[0];
  if (recorded?.remotePort === undefined) throw new Error('no held model call');
  const pid = await pidOwningPort(
    fleet.workers.map((w) => w.child.pid!),
    recorded.remotePort,
  );
  const worker = fleet.workers.find((w) => w.child.pid === pid);
  if (worker === undefined) throw new Error(`no worker process owns port ${recorded.remotePort}`);
  return worker;
}
