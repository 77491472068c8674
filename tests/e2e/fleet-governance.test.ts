import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writePackage } from '@agent-platform/domain/testing';
import { startOidcProvider, type OidcProviderHarness } from '@agent-platform/oidc/testing';
import { requireBinary, waitUntil } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoReply, startFleet, type Fleet } from '../support/fleet.ts';
import { call } from '../support/platform-process.ts';

// Governance in a fleet (docs/auth.md "OIDC", docs/audit.md "Checkpoints"): two api nodes and a
// worker over NATS and Redis, signing in with access tokens of a real OpenID provider on
// loopback, and writing signed audit checkpoints to one sink. Every node validates the same
// tokens on its own; one checkpoint is written per period across the nodes; a chain cut in the
// shared store is reported by every node and never checkpointed over; a node SIGKILLed in the
// middle of a request leaves the other serving the same tokens.
const natsBinary = requireBinary('nats-server');
const redisBinary = requireBinary('redis-server');

interface RawDb {
  prepare(sql: string): { run(...p: unknown[]): unknown };
  close(): void;
}
const Database = createRequire(import.meta.url)('better-sqlite3') as new (path: string) => RawDb;

const AUDIENCE = 'https://agents.fleet.example';
const INTERVAL_SECS = 2;

describe.skipIf(natsBinary === null || redisBinary === null)(
  'governance in a fleet: OIDC sign-in and audit checkpoints on 2 api nodes',
  () => {
    let provider: OidcProviderHarness;
    let fleet: Fleet;
    let sink: string;
    let packages: string;
    let A: string;
    let B: string;
    let admin: string;
    let viewer: string;
    let agent: string;
    let release: () => void = () => undefined;

    beforeAll(async () => {
      provider = await startOidcProvider({
        audience: AUDIENCE,
        clients: { 'fleet-admin': { roles: ['platform-admins'] }, 'fleet-viewer': { roles: ['staff'] } },
      });
      sink = await mkdtemp(join(tmpdir(), 'ap-fleet-ckpt-'));
      packages = await mkdtemp(join(tmpdir(), 'ap-fleet-gov-packages-'));
      const held = new Promise<void>((resolve) => (release = resolve));
      fleet = await startFleet({
        apis: 2,
        workers: 1,
        schedulers: 0,
        config: {
          auth: {
            mode: 'oidc',
            oidc: {
              issuer: provider.issuer,
              audience: AUDIENCE,
              role_claim: 'realm_access.roles',
              allowed_algorithms: ['RS256'],
              role_mapping: { 'platform-admins': 'admin', staff: 'viewer' },
            },
          },
          audit: { checkpoints: { sink, interval_secs: INTERVAL_SECS } },
        },
        // The message 'hold me' waits at the model until the test releases it: a request in flight.
        reply: (request) =>
          JSON.stringify(request.body).includes('hold me')
            ? { ...echoReply(request), hold: held }
            : echoReply(request),
      });
      [A, B] = fleet.urls as [string, string];
      [admin, viewer] = await Promise.all([
        provider.accessToken('fleet-admin'),
        provider.accessToken('fleet-viewer'),
      ]);
      const dir = await writePackage(packages, {
        type: 'agent-template',
        name: 'fleet-governed',
        body: 'You answer claims questions.',
      });
      const installed = await call(A, 'POST', '/catalog/install', {
        token: admin,
        body: { path: dir, activate: true },
      });
      expect(installed.status, JSON.stringify(installed.body)).toBe(201);
      agent = installed.body.installed.at(-1).id;
    }, 180_000);

    afterAll(async () => {
      release();
      await fleet?.close();
      await provider?.close();
      await rm(sink, { recursive: true, force: true });
      await rm(packages, { recursive: true, force: true });
    });

    /** The checkpoint objects in the sink directory (not the temporary files of a write in progress). */
    const checkpointFiles = async (): Promise<string[]> =>
      (await readdir(join(sink, 'checkpoints')).catch(() => [] as string[]))
        .filter((name) => /^\d{4}-.*-\d+\.json$/.test(name))
        .sort();
    /** Every checkpoint and latest.json, for a failure message. */
    const sinkContents = async (): Promise<string> => {
      const files = (await checkpointFiles()).map((f) => join('checkpoints', f)).concat('latest.json');
      const texts = await Promise.all(
        files.map((f) => readFile(join(sink, f), 'utf8').catch((error: Error) => error.message)),
      );
      return files.map((f, i) => `${f}: ${texts[i]}`).join('\n');
    };
    /** `checkpoints/<at with - for :>-<count>.json` -> the time it was taken. */
    const takenAt = (name: string): number =>
      Date.parse(name.replace(/-\d+\.json$/, '').replace(/T(\d\d)-(\d\d)-/, 'T$1:$2:'));

    it('accepts the provider tokens on every node, with mapped roles and the external identity', async () => {
      for (const node of [A, B]) {
        const whoami = await call(node, 'GET', '/auth/whoami', { token: admin });
        expect(whoami.body).toEqual({
          identity: 'oidc:fleet-admin',
          role: 'admin',
          key_id: null,
          issuer: provider.issuer,
          subject: 'fleet-admin',
        });
        expect((await call(node, 'GET', '/agents', { token: viewer })).status).toBe(200);
        const refused = await call(node, 'POST', `/agents/${agent}/send`, {
          token: viewer,
          body: { message: 'hi' },
        });
        expect(refused.status).toBe(403);
        expect(refused.body).toMatchObject({
          error: 'forbidden',
          message: expect.stringContaining('viewer'),
        });
        expect((await call(node, 'GET', '/agents', { token: `${admin.slice(0, -4)}AAAA` })).status).toBe(401);
      }
      const sent = await call(B, 'POST', `/agents/${agent}/send`, {
        token: admin,
        body: { message: 'claim 17 status?' },
      });
      expect(sent.status, JSON.stringify(sent.body)).toBe(200);
      expect(sent.body.content).toBe('claim 17 status?');
      // Each node fetched the provider's keys itself, and once: not per request.
      expect(provider.hits('/jwks')).toBeLessThanOrEqual(2);
    });

    it('writes one checkpoint per period across both nodes', async () => {
      await waitUntil(async () => (await checkpointFiles()).length >= 4, {
        timeoutMs: 30_000,
        message: 'four scheduled checkpoints',
      });
      const periods = (await checkpointFiles()).map((name) =>
        Math.floor(takenAt(name) / (INTERVAL_SECS * 1000)),
      );
      expect(periods.every((p) => Number.isFinite(p))).toBe(true);
      expect(new Set(periods).size).toBe(periods.length);
      for (const node of [A, B]) {
        expect((await call(node, 'GET', '/security/verify', { token: admin })).body).toMatchObject({
          valid: true,
          checkpoint_status: 'verified',
        });
      }
    });

    it('reports a chain cut in the shared store on every node, and no node checkpoints over it until an admin supersedes', async () => {
      // Cut right after a checkpoint was written, so the next one is a period away.
      const before = (await checkpointFiles()).length;
      await waitUntil(async () => (await checkpointFiles()).length > before, {
        timeoutMs: 15_000,
        message: 'a fresh checkpoint',
      });
      const latest = (await checkpointFiles()).at(-1)!;
      const count = Number(/-(\d+)\.json$/.exec(latest)![1]);
      const db = new Database(join(fleet.dir, 'data', 'platform.db'));
      db.prepare('DELETE FROM l_audit WHERE seq > ?').run(count - 3);
      db.close();
      const cut = await checkpointFiles();

      for (const node of [A, B]) {
        const verify = await call(node, 'GET', '/security/verify', { token: admin });
        expect(verify.body).toMatchObject({ valid: false, checkpoint_status: 'failed' });
        expect(verify.body.reason).toMatch(
          /entries were removed|hash differs from the checkpoint|entry removed after it was verified/,
        );
      }
      // Three periods later, neither node has written a checkpoint over the cut chain.
      const deadline = Date.now() + 3 * INTERVAL_SECS * 1000;
      await waitUntil(() => Date.now() > deadline, { timeoutMs: 10_000, message: 'three periods' });
      expect(await checkpointFiles(), `${await sinkContents()}\n${fleet.logs()}`).toEqual(cut);
      expect(fleet.logs()).toContain('audit checkpoint write failed');
      const refused = await call(A, 'POST', '/security/checkpoints', { token: admin });
      expect(refused.status).toBe(409);
      expect(
        (
          await call(B, 'POST', '/security/checkpoints', {
            token: viewer,
            body: { supersede_reason: 'nope' },
          })
        ).status,
      ).toBe(403);

      const superseded = await call(B, 'POST', '/security/checkpoints', {
        token: admin,
        body: { supersede_reason: 'fleet test: entries cut on purpose' },
      });
      expect(superseded.status, JSON.stringify(superseded.body)).toBe(201);
      expect(superseded.body.checkpoint.supersedes).toMatchObject({
        name: `checkpoints/${latest}`,
        reason: 'fleet test: entries cut on purpose',
      });
      expect((await call(A, 'GET', '/security/verify', { token: admin })).body).toMatchObject({
        valid: true,
        checkpoint_status: 'verified',
      });
      const audited = await call(A, 'GET', '/security/audit?limit=50&actor=oidc:fleet-admin', {
        token: admin,
      });
      expect(
        audited.body.entries.some(
          (e: { action: string; result: string }) =>
            e.action === 'POST /security/checkpoints' && e.result === '201',
        ),
      ).toBe(true);
    }, 60_000);

    it('keeps serving the same tokens on the other node when one is SIGKILLed mid-request', async () => {
      const inFlight = call(A, 'POST', `/agents/${agent}/send`, {
        token: admin,
        body: { message: 'hold me' },
      }).catch((error: unknown) => error);
      await waitUntil(() => fleet.provider.requests.some((r) => JSON.stringify(r.body).includes('hold me')), {
        timeoutMs: 15_000,
        message: 'the held request to reach the model',
      });
      await fleet.apis[0]!.kill();
      expect(await inFlight).toBeInstanceOf(Error);
      release();
      const sent = await call(B, 'POST', `/agents/${agent}/send`, {
        token: admin,
        body: { message: 'after the kill' },
      });
      expect(sent.status).toBe(200);
      expect(sent.body.content).toBe('after the kill');
      expect((await call(B, 'GET', '/auth/whoami', { token: viewer })).body).toMatchObject({
        identity: 'oidc:fleet-viewer',
        role: 'viewer',
      });
      // B alone still writes the scheduled checkpoints and verify holds.
      const now = (await checkpointFiles()).length;
      await waitUntil(async () => (await checkpointFiles()).length > now, {
        timeoutMs: 15_000,
        message: 'a checkpoint written by the surviving node',
      });
      expect((await call(B, 'GET', '/security/verify', { token: admin })).body).toMatchObject({
        valid: true,
      });
    }, 60_000);
  },
);
