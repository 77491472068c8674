import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectNatsBus } from '@agent-platform/bus/nats';
import { Streams, type PlatformEvent } from '@agent-platform/contracts';
import { createAgentStore } from '@agent-platform/domain';
import { agentFixture } from '@agent-platform/domain/testing';
import { verifyWebhook } from '@agent-platform/net';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import {
  requireBinary,
  startNatsServer,
  startRedisServer,
  startWebhookReceiver,
  waitUntil,
  type NatsServerHandle,
  type RedisServerHandle,
  type WebhookReceiver,
  freePort,
} from '@agent-platform/testkit';
import { stringify } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, writeLicence, type AppName, type AppProcess } from '../support/fleet.ts';
import { call } from '../support/platform-process.ts';

// Fleet agreement (docs/scale-out.md "What each node keeps on its own disk"): api nodes and a
// worker, each with a data dir of its own, sharing only the store, NATS and Redis. The keys are
// the deployment's to hand to every node; a node holding another one refuses to start.
//
// The shared store: until the multi-host harness (PostgreSQL, tests/support/multi-host-fleet.ts)
// is the default, the embedded store file is shared by a symlink `<data_dir>/platform.db` in each
// node's own data dir (SQLite follows it: one file, one WAL), so everything else a node reads from
// its data dir (vault.key, the checkpoint and backup keys) is its own. `SharedStore` is the one
// place to swap for another store.
const natsBinary = requireBinary('nats-server');
const redisBinary = requireBinary('redis-server');

interface SharedStore {
  /** Merged into every node's `[runtime]`. */
  runtime: Record<string, unknown>;
  /** Makes `dataDir` (a node's own) use the shared store. */
  attach(dataDir: string): Promise<void>;
  open(): Promise<Store>;
}

function embeddedSharedStore(dir: string): SharedStore {
  const file = join(dir, 'platform.db');
  return {
    runtime: { store: 'embedded' },
    attach: async (dataDir) => {
      await mkdir(dataDir, { recursive: true, mode: 0o700 });
      await symlink(file, join(dataDir, 'platform.db'));
    },
    open: () => openEmbeddedStore({ path: file }),
  };
}

function signingKeyPem(): string {
  return generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
}

describe.skipIf(natsBinary === null || redisBinary === null)('fleet agreement: nodes with their own data dirs, one shared store', () => {
  let dir: string;
  let nats: NatsServerHandle;
  let redis: RedisServerHandle;
  let licence: { file: string; public_key_file: string };
  const started: AppProcess[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ap-fleet-agreement-'));
    [nats, redis] = await Promise.all([startNatsServer(), startRedisServer()]);
    licence = await writeLicence(dir, {});
  });

  afterAll(async () => {
    await Promise.all(started.map((p) => p.kill()));
    await Promise.all([nats?.dispose(), redis?.dispose()]);
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  /** A node on a host of its own: its data dir, its config file; `keys` = what the deployment handed it. */
  async function node(
    shared: SharedStore,
    name: string,
    app: AppName,
    keys: { vaultKey?: string; checkpointPem?: string; backupPem?: string },
  ): Promise<AppProcess> {
    const home = join(dir, name);
    const dataDir = join(home, 'data');
    await shared.attach(dataDir);
    const keyFiles: Record<string, unknown> = {};
    if (keys.checkpointPem !== undefined) {
      await writeFile(join(home, 'checkpoint-key.pem'), keys.checkpointPem, { mode: 0o600 });
      keyFiles.audit = { checkpoints: { signing_key_file: join(home, 'checkpoint-key.pem') } };
    }
    if (keys.backupPem !== undefined) {
      await writeFile(join(home, 'backup-key.pem'), keys.backupPem, { mode: 0o600 });
      keyFiles.backup = { signing_key_file: join(home, 'backup-key.pem') };
    }
    const configPath = join(home, 'platform.toml');
    await writeFile(
      configPath,
      stringify({
        server: { listen: `127.0.0.1:${await freePort()}` },
        storage: { data_dir: dataDir },
        runtime: { bus: 'nats', queue: 'bullmq', nats_url: nats.url, redis_url: redis.url, ...shared.runtime },
        auth: { mode: 'local' },
        licence,
        network: { allow_private_targets: true },
        webhooks: { backoff_base_ms: 100 },
        logging: { level: 'warn' },
        ...keyFiles,
      }),
    );
    const proc = startApp(app, configPath, keys.vaultKey === undefined ? {} : { AP_VAULT_KEY: keys.vaultKey });
    started.push(proc);
    return proc;
  }

  it('an api node that made its own keys on its own disk is refused by the fleet, naming each key, both fingerprints and the fix', async () => {
    const shared = embeddedSharedStore(join(dir, 'store-unhanded'));
    await mkdir(join(dir, 'store-unhanded'), { recursive: true });
    const a = await node(shared, 'unhanded-a', 'api', {});
    await a.ready();
    const b = await node(shared, 'unhanded-b', 'api', {});
    expect(await b.exited).toBe(1);
    const output = b.output();
    expect(output).toContain('this node refuses to start: it does not hold what every node of the fleet must share (docs/scale-out.md)');
    expect(output).toMatch(/vault key: this node's vault key \(hmac-sha256:[0-9a-f]{32}\) differs from the fleet's \(hmac-sha256:[0-9a-f]{32}, recorded by api@/);
    expect(output).toContain("fix: set the environment variable AP_VAULT_KEY ([vault] key_env) to the fleet's vault key on this node");
    expect(output).toMatch(/audit checkpoint signing key: this node's audit checkpoint signing key \(sha256:[0-9a-f]+\) differs from the fleet's/);
    expect(output).toContain('fix: set [audit.checkpoints] signing_key_file');
    expect(output).toMatch(/backup signing key: this node's backup signing key \(sha256:[0-9a-f]+\) differs/);
    expect(output).toContain('fix: set [backup] signing_key_file');
    // The licence is the same file on both: no line about it.
    expect(output).not.toContain('licence: this node');
    await a.stop();
  });

  describe('api nodes and a worker handed the same keys', () => {
    const vaultKey = randomBytes(32).toString('base64');
    const checkpointPem = signingKeyPem();
    const backupPem = signingKeyPem();
    let shared: SharedStore;
    let urls: string[];
    let receiver: WebhookReceiver;
    let token: string;

    beforeAll(async () => {
      await mkdir(join(dir, 'store-handed'), { recursive: true });
      shared = embeddedSharedStore(join(dir, 'store-handed'));
      receiver = await startWebhookReceiver(() => 200);
      // Two first boots racing on one empty store: they agree on the one value both hold.
      const apis = await Promise.all(['handed-a', 'handed-b'].map((name) => node(shared, name, 'api', { vaultKey, checkpointPem, backupPem })));
      urls = await Promise.all(apis.map((p) => p.ready()));
    });

    afterAll(async () => {
      await receiver?.close();
    });

    it('accepts exactly one bootstrap key between the two api nodes when their first requests race', async () => {
      const replies = await Promise.all(
        Array.from({ length: 12 }, (_, i) => call(urls[i % 2]!, 'POST', '/auth/keys', { body: { name: `first-${i}`, role: 'admin' } })),
      );
      const statuses = replies.map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      expect(statuses.filter((s) => s !== 200)).toEqual(Array(11).fill(401));
      token = replies.find((r) => r.status === 200)!.body.secret as string;
      for (const url of urls) expect((await call(url, 'GET', '/auth/keys', { token })).body.keys).toHaveLength(1);
    });

    it('a secret stored through api node A is used by a worker on its own disk handed the same vault key', async () => {
      const store = await shared.open();
      let agent: string;
      try {
        agent = (await createAgentStore(store).insert(agentFixture())).id;
      } finally {
        await store.close();
      }
      // The webhook's signing secret is sealed with the vault key by api node A.
      const created = await call(urls[0]!, 'POST', '/webhooks', { token, body: { agent_id: agent, url: `${receiver.url}/hook` } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const { secret } = created.body as { secret: string };
      const worker = await node(shared, 'worker-own-disk', 'agent-worker', { vaultKey });
      await worker.ready();
      await publishAgentEvent(agent);
      await waitUntil(() => receiver.requests.length >= 1, { timeoutMs: 20_000, message: 'a delivery by the worker' });
      const delivery = receiver.requests[0]!;
      expect(verifyWebhook(secret, delivery.headers, delivery.body, Math.floor(Date.now() / 1000))).toMatchObject({ ok: true });
    });

    it('a worker handed another vault key refuses to start, saying which variable to set', async () => {
      const worker = await node(shared, 'worker-other-key', 'agent-worker', { vaultKey: randomBytes(32).toString('base64') });
      expect(await worker.exited).toBe(1);
      expect(worker.output()).toMatch(/vault key: this node's vault key \(hmac-sha256:[0-9a-f]{32}\) differs from the fleet's \(hmac-sha256:[0-9a-f]{32}, recorded by api@/);
      expect(worker.output()).toContain("fix: set the environment variable AP_VAULT_KEY ([vault] key_env) to the fleet's vault key on this node");
      expect(worker.output()).not.toContain(vaultKey);
    });

    /** An `invocation.completed` event of `agent` on the fleet's NATS, as a worker would publish it. */
    async function publishAgentEvent(agent: string): Promise<void> {
      const bus = await connectNatsBus({ servers: nats.url });
      const event: PlatformEvent = { id: randomUUID(), kind: 'invocation.completed', occurred_at: new Date().toISOString(), agent_id: agent, data: { tokens_used: 8 } };
      try {
        await bus.publish(Streams.platformEvents, { id: event.id, correlation_id: event.id, attempt: 1, occurred_at: event.occurred_at, data: event });
      } finally {
        await bus.close();
      }
    }
  });
});
