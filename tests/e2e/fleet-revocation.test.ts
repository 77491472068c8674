import { generateKeyPairSync } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSigner } from '@agent-platform/registry-core';
import { openExampleArchives, type ExampleArchives } from '@agent-platform/registry-core/testing';
import { freePort, requireBinary, waitUntil } from '@agent-platform/testkit';
import { stringify } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, startFleet, writeLicence, type AppProcess, type Fleet } from '../support/fleet.ts';
import { call, startPlatform, type PlatformProcess } from '../support/platform-process.ts';

// Issue 12, revocation end to end (docs/catalog.md "Revocations", docs/registry.md "Revocation
// feed"): a registry process and two platforms; a security yank suspends the agent on both within
// a minute, push where the platform shares the registry's bus, polling otherwise.
//
// - The registry runs alone (`apps/registry`) with its own embedded store and data dir, on the
//   fleet's NATS, in auth mode local (the first registry key is bootstrapped without a credential
//   and publishes and yanks; the platforms read anonymously). Its Ed25519 key is made here first,
//   so its public key is in every platform's `trusted_keys` before any platform starts.
// - Platform A is a fleet (1 api node, 1 agent worker) on that NATS, polling only every 600 s:
//   only the bus push can suspend its agent in time.
// - Platform B is an all-in-one (embedded engines, no shared bus) polling every 2 s.
// - Both install `claims-intake` by name (with fnol-triage and loss-summary) and activate it. A
//   first security yank, of policy-servicing 1.0.0 (installed nowhere), is recorded on both, so
//   each has a stored cursor (seq 1) before the kills.
// - SIGKILL in the middle: B is killed before the yank of claims-intake 1.0.0 (seq 2), so it
//   misses it entirely; A's agent is suspended by the push; B, restarted on the same data dir and
//   config, reads on from its stored cursor at its first poll. Then A's api node is killed and
//   restarted: it applies nothing twice (one `package.revoked` audit entry per revocation and
//   platform). A third security yank (policy-servicing 1.0.1, installed nowhere) is the barrier
//   proving both platforms read the feed again after their restart before the entries are counted.
// - Until an operator overrides, activation is refused on both; the override is recorded and
//   activation then works on B (A stays refused: an override is per platform). A yanked version
//   is never picked again by name.
const natsBinary = requireBinary('nats-server');
const redisBinary = requireBinary('redis-server');

/** Each platform must learn of a yank within a minute (issue 12). */
const WITHIN_A_MINUTE_MS = 60_000;
const REASON = 'uploads claim documents to a third party';
const OVERRIDE_ROUTE = '/catalog/installed/claims-intake/override-revocation';

interface Trail {
  action: string;
  target: string;
  result: string;
  identity: string;
  metadata: Record<string, unknown>;
}

describe.skipIf(natsBinary === null || redisBinary === null)(
  'revocation: a registry, a fleet (push) and an all-in-one (poll)',
  () => {
    let dir: string;
    let examples: ExampleArchives;
    let fleet: Fleet;
    let registry: AppProcess;
    let registryUrl: string;
    let registryKey: string;
    let keyId: string;
    let platformB: PlatformProcess;
    /** The output of B's earlier runs (it is killed and started again). */
    const earlierB: string[] = [];
    let bConfigPath: string;
    let bUrl: string;
    let apiA: string;
    let tokenA: string;
    let tokenB: string;

    const logs = (): string =>
      [
        fleet?.logs() ?? '',
        `--- registry\n${registry?.output() ?? ''}`,
        ...[...earlierB, platformB?.output() ?? ''].map(
          (o, i) => `--- platform B (all-in-one), run ${i + 1}\n${o}`,
        ),
      ].join('\n');

    const startB = async (): Promise<string> => {
      if (platformB !== undefined) earlierB.push(platformB.output());
      platformB = startPlatform(join(dir, 'b'), ['--config', bConfigPath]);
      return platformB.listening(90_000);
    };

    const agentState = async (base: string, token: string, id: string): Promise<string | null> => {
      const res = await call(base, 'GET', `/agents/${id}`, { token }).catch(() => null);
      return res?.status === 200 ? (res.body.state as string) : null;
    };

    const auditOf = async (base: string, token: string): Promise<Trail[]> => {
      const res = await call(base, 'GET', '/security/audit?category=agents&limit=1000', { token });
      expect(res.status, res.text).toBe(200);
      return res.body.entries as Trail[];
    };

    const revokedEntries = async (base: string, token: string): Promise<Trail[]> =>
      (await auditOf(base, token)).filter((e) => e.action === 'package.revoked');

    /** waitUntil, with every process's output (as it is at the timeout) in the failure. */
    const waitFor = async (
      condition: () => Promise<boolean>,
      timeoutMs: number,
      what: string,
    ): Promise<void> =>
      waitUntil(condition, { timeoutMs, intervalMs: 50, message: what }).catch((error: unknown) => {
        throw new Error(`${(error as Error).message}\n${logs()}`, { cause: error });
      });

    /** Waits until a platform's audit trail shows the revocation of `target` (applied or recorded). */
    const awaitRevocation = async (
      side: string,
      base: string,
      token: string,
      target: string,
    ): Promise<void> =>
      waitFor(
        async () => (await revokedEntries(base, token).catch(() => [])).some((e) => e.target === target),
        30_000,
        `platform ${side} recording the revocation of ${target}`,
      );

    const installed = async (
      base: string,
      token: string,
      name: string,
    ): Promise<Record<string, unknown> | undefined> =>
      (
        (await call(base, 'GET', '/catalog/installed', { token })).body.packages as Array<
          Record<string, unknown>
        >
      ).find((p) => p.name === name);

    const publish = async (name: string, version = '1.0.0'): Promise<void> => {
      const res = await fetch(`${registryUrl}/packages`, {
        method: 'POST',
        headers: { 'content-type': 'application/gzip', authorization: `Bearer ${registryKey}` },
        body: await examples.build(name, { version }),
      });
      expect(res.status, `publish ${name} ${version}: ${await res.clone().text()}`).toBe(201);
    };

    const securityYank = async (name: string, version: string, reason: string): Promise<void> => {
      const res = await call(registryUrl, 'POST', `/packages/${name}/${version}/yank`, {
        token: registryKey,
        body: { reason, security: true },
      });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ yanked: true, yank: { reason, security: true } });
    };

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'ap-fleet-revocation-'));
      examples = await openExampleArchives();

      // The registry's signing key, made before anything starts: its public key is what every
      // platform trusts (`GET /signing-key` would show the same).
      const { privateKey } = generateKeyPairSync('ed25519');
      const signingKeyFile = join(dir, 'registry-signing-key.pem');
      await writeFile(signingKeyFile, privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600 });
      const { public_key, key_id } = createSigner(privateKey).publicKey;
      keyId = key_id;
      const registryPort = await freePort();
      registryUrl = `http://127.0.0.1:${registryPort}`;
      const catalog = { registry_url: registryUrl, trusted_keys: [public_key] };

      fleet = await startFleet({
        apis: 1,
        workers: 1,
        schedulers: 0,
        config: { catalog: { ...catalog, revocation_poll_secs: 600 } },
      });
      apiA = fleet.urls[0]!;

      const registryConfig = join(dir, 'registry.toml');
      await writeFile(
        registryConfig,
        stringify({
          storage: { data_dir: join(dir, 'registry-data') },
          runtime: { bus: 'nats', nats_url: fleet.nats.url, store: 'embedded', queue: 'embedded' },
          registry: {
            listen: `127.0.0.1:${registryPort}`,
            signing_key_file: signingKeyFile,
            auth: { mode: 'local' },
          },
          logging: { level: 'warn' },
        }),
      );
      registry = startApp('registry', registryConfig);

      await mkdir(join(dir, 'b'));
      bConfigPath = join(dir, 'b', 'agent-platform.toml');
      await writeFile(
        bConfigPath,
        stringify({
          server: { listen: `127.0.0.1:${await freePort()}` },
          storage: { data_dir: join(dir, 'b', 'data') },
          auth: { mode: 'local' },
          licence: await writeLicence(join(dir, 'b'), {}),
          providers: [{ id: 'fake', kind: 'openai', base_url: fleet.provider.url, models: ['m'] }],
          models: { default: 'fake/m' },
          catalog: { ...catalog, revocation_poll_secs: 2 },
          logging: { level: 'warn' },
        }),
      );
      const [registryAddress] = await Promise.all([registry.ready(), startB().then((url) => (bUrl = url))]);
      expect(registryAddress).toBe(registryUrl);

      // Bootstrap: the registry's first key (no credential while none exists), each platform's admin key.
      const issued = await call(registryUrl, 'POST', '/keys', {
        body: { name: 'release-bot', role: 'registry-admin' },
      });
      expect(issued.status, issued.text).toBe(201);
      registryKey = issued.body.secret;
      tokenA = (await call(apiA, 'POST', '/auth/keys', { body: { name: 'admin', role: 'admin' } })).body
        .secret;
      tokenB = (await call(bUrl, 'POST', '/auth/keys', { body: { name: 'admin', role: 'admin' } })).body
        .secret;
      expect((await call(registryUrl, 'GET', '/signing-key')).body).toMatchObject({ public_key, key_id });
      for (const name of ['loss-summary', 'fnol-triage', 'claims-intake', 'policy-servicing'])
        await publish(name);
      await publish('policy-servicing', '1.0.1');
    }, 240_000);

    afterAll(async () => {
      platformB?.kill();
      await platformB?.exited;
      await registry?.kill();
      await fleet?.close();
      await examples?.close();
      if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    });

    it('suspends the agent on both platforms within a minute of a security yank, across a SIGKILL of each', async () => {
      // Install by name on both, activated: claims-intake -> fnol-triage -> loss-summary.
      const agents: Record<'A' | 'B', string> = { A: '', B: '' };
      for (const [side, base, token] of [
        ['A', apiA, tokenA],
        ['B', bUrl, tokenB],
      ] as const) {
        const res = await call(base, 'POST', '/catalog/install', {
          token,
          body: { name: 'claims-intake', activate: true },
        });
        expect(res.status, `install on ${side}: ${res.text}`).toBe(201);
        expect(res.body.installed.map((p: { name: string }) => p.name)).toEqual([
          'loss-summary',
          'fnol-triage',
          'claims-intake',
        ]);
        agents[side] = res.body.installed.at(-1).id;
        expect(await agentState(base, token, agents[side])).toBe('Running');
        expect(await installed(base, token, 'claims-intake')).toMatchObject({
          source: 'registry',
          revoked: false,
          revocation: null,
        });
      }

      // seq 1, installed nowhere: recorded on both (A by push, B by poll); both store cursor 1.
      await securityYank('policy-servicing', '1.0.0', 'typosquatted upload');
      await awaitRevocation('A', apiA, tokenA, 'policy-servicing@1.0.0');
      await awaitRevocation('B', bUrl, tokenB, 'policy-servicing@1.0.0');

      // SIGKILL platform B: it misses the next yank (no bus shared, no process to poll).
      platformB.kill();
      await platformB.exited;

      const yankedAt = Date.now();
      await securityYank('claims-intake', '1.0.0', REASON);

      // A: the push. Its poll interval is 600 s (its poll at start found no registry yet: the fleet
      // starts before it), so nothing else can suspend its agent in time.
      await waitFor(
        async () => (await agentState(apiA, tokenA, agents.A)) === 'Suspended',
        20_000,
        "platform A's agent Suspended by the pushed revocation",
      );
      const pushMs = Date.now() - yankedAt;
      expect(await installed(apiA, tokenA, 'claims-intake')).toMatchObject({
        revoked: true,
        revocation: { version: '1.0.0', reason: REASON, seq: 2, override: null },
      });

      // B: restarted on the same data dir and config, it reads the feed on from its stored cursor.
      const restartedAt = Date.now();
      expect(await startB()).toBe(bUrl);
      await waitFor(
        async () => (await agentState(bUrl, tokenB, agents.B)) === 'Suspended',
        Math.max(1_000, WITHIN_A_MINUTE_MS - (Date.now() - yankedAt)),
        "platform B's agent Suspended by a poll after its restart, within a minute of the yank",
      );
      const pollMs = Date.now() - yankedAt;
      console.info(
        `revocation: yank -> Suspended on platform A (push) ${pushMs} ms; on platform B (poll after restart) ${pollMs} ms, of which ${Date.now() - restartedAt} ms since its restart`,
      );
      expect(pushMs, 'the push takes seconds, far below the 600 s poll').toBeLessThan(20_000);
      expect(pollMs).toBeLessThan(WITHIN_A_MINUTE_MS);
      expect(await installed(bUrl, tokenB, 'claims-intake')).toMatchObject({
        revoked: true,
        revocation: { version: '1.0.0', reason: REASON, seq: 2, override: null },
      });

      // A second SIGKILL: A's api node, after it applied the yank. Started again, it reads the feed
      // from its stored cursor and applies nothing twice.
      await fleet.apis[0]!.kill();
      const restartedApi = await fleet.add('api');
      apiA = await restartedApi.ready();
      // A barrier (seq 3, installed nowhere): once both recorded it, both read the feed after their
      // restart (A by push, B by its poll), so anything applied twice would be in the trail by now.
      await securityYank('policy-servicing', '1.0.1', 'typosquatted upload, again');
      for (const [side, base, token] of [
        ['A', apiA, tokenA],
        ['B', bUrl, tokenB],
      ] as const) {
        await awaitRevocation(side, base, token, 'policy-servicing@1.0.1');
        // Newest first: one entry per revocation, whatever was killed and restarted.
        expect(
          await revokedEntries(base, token),
          `platform ${side}: one audit entry per revocation\n${logs()}`,
        ).toEqual([
          expect.objectContaining({
            target: 'policy-servicing@1.0.1',
            result: 'recorded',
            identity: `registry:${keyId}`,
            metadata: expect.objectContaining({ seq: 3, installed: false }),
          }),
          expect.objectContaining({
            target: 'claims-intake@1.0.0',
            result: 'applied',
            identity: `registry:${keyId}`,
            metadata: expect.objectContaining({
              seq: 2,
              reason: REASON,
              installed: true,
              agents_suspended: 1,
              agent_ids: [agents[side]],
            }),
          }),
          expect.objectContaining({
            target: 'policy-servicing@1.0.0',
            result: 'recorded',
            identity: `registry:${keyId}`,
            metadata: expect.objectContaining({ seq: 1, installed: false }),
          }),
        ]);

        // Until an override, activation is refused, naming the revocation and the override route.
        const refused = await call(base, 'POST', `/agents/${agents[side]}/activate`, { token });
        expect(refused.status, refused.text).toBe(500);
        expect(refused.body.error.category).toBe('ActivationError');
        expect(refused.body.error.message).toContain('package claims-intake 1.0.0 was revoked');
        expect(refused.body.error.message).toContain(`POST ${OVERRIDE_ROUTE}`);
        expect(await agentState(base, token, agents[side])).toBe('Suspended');

        // New resolution skips the yanked version: asking for exactly it is refused.
        const again = await call(base, 'POST', '/catalog/install', {
          token,
          body: { name: 'claims-intake', version: '=1.0.0' },
        });
        expect(again.status, again.text).toBe(400);
        expect(again.body.error.category).toBe('CatalogError');
        expect(again.body.error.message).toContain('version 1.0.0 is yanked for a security reason');
      }

      // The operator of B overrides: recorded with who and why, then activation works there. A's
      // agent stays refused: an override is a platform's own decision.
      const override = await call(bUrl, 'POST', OVERRIDE_ROUTE, {
        token: tokenB,
        body: { reason: 'audited the archive; the upload goes to our own DMS' },
      });
      expect(override.status, override.text).toBe(200);
      expect(override.body).toEqual({
        name: 'claims-intake',
        revocations: [
          {
            version: '1.0.0',
            reason: REASON,
            revoked_at: expect.any(String),
            seq: 2,
            override: {
              reason: 'audited the archive; the upload goes to our own DMS',
              by: 'admin',
              at: expect.any(String),
            },
          },
        ],
      });
      expect((await auditOf(bUrl, tokenB)).filter((e) => e.action === 'package.revocation.override')).toEqual(
        [
          expect.objectContaining({
            identity: 'admin',
            target: 'claims-intake',
            metadata: { reason: 'audited the archive; the upload goes to our own DMS', versions: ['1.0.0'] },
          }),
        ],
      );
      expect(await agentState(bUrl, tokenB, agents.B), 'the override reactivates nothing by itself').toBe(
        'Suspended',
      );
      const activated = await call(bUrl, 'POST', `/agents/${agents.B}/activate`, { token: tokenB });
      expect(activated.status, activated.text).toBe(200);
      expect(await agentState(bUrl, tokenB, agents.B)).toBe('Running');
      expect((await call(apiA, 'POST', `/agents/${agents.A}/activate`, { token: tokenA })).status).toBe(500);
      expect(await agentState(apiA, tokenA, agents.A)).toBe('Suspended');
    }, 240_000);
  },
);
