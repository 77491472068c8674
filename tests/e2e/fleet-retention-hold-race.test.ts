import { randomUUID } from 'node:crypto';
import { workflowRuns } from '@agent-platform/domain';
import type { Store } from '@agent-platform/store';
import { requireBinary, waitUntil } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFleet, type Fleet } from '../support/fleet.ts';
import { call } from '../support/platform-process.ts';
import { seedOldRuns, sweepHolder } from '../support/retention-kit.ts';

// A legal hold placed on one api node while another node's sweep is deleting (issue 21 item 8):
// two api nodes over NATS and Redis sharing the embedded store, 3,000 year-old runs, the newest of
// them carrying a claim number. As soon as the sweep (run by whichever node took the lock at boot)
// has deleted some runs, the claim is held through the OTHER node; once that POST answered, the
// held run must survive the sweep already under way.
const natsBinary = requireBinary('nats-server');
const redisBinary = requireBinary('redis-server');
const RUNS = 3_000;
const CLAIM = 'CASE-RACE-1';

describe.skipIf(natsBinary === null || redisBinary === null)(
  'a legal hold placed on one node while another sweeps',
  () => {
    let fleet: Fleet;
    let store: Store | undefined;
    let token: string;
    const heldRun = randomUUID();

    beforeAll(async () => {
      fleet = await startFleet({
        apis: 2,
        workers: 0,
        schedulers: 0,
        prepare: async (dataDir) => {
          const runs: Array<{ id: string; businessKey?: string }> = Array.from({ length: RUNS }, () => ({
            id: randomUUID(),
          }));
          await seedOldRuns(dataDir, [...runs, { id: heldRun, businessKey: CLAIM }]);
        },
        // Small batches: the sweep of 3,000 runs takes long enough on a fast machine for the hold
        // to land in the middle of it (with 50 a clean-clone run saw it finish first).
        config: { retention: { runs_days: 30, sweep_interval_secs: 3600, batch_size: 10 } },
      });
      store = await fleet.openStore();
      // The key first (the store is shared): the hold then follows the first deletions at once.
      token = (await call(fleet.urls[0]!, 'POST', '/auth/keys', { body: { name: 'admin', role: 'admin' } })).body.secret as string;
    }, 240_000);

    afterAll(async () => {
      await store?.close();
      await fleet?.close();
    });

    it('keeps the run the hold covers: the sweep in the other process re-reads the holds before each batch', async () => {
      const runs = workflowRuns(store!);
      await waitUntil(async () => (await runs.count({ state: 'Completed' })) < RUNS - 100, {
        timeoutMs: 120_000,
        intervalMs: 20,
        message: 'the boot sweep deleting runs',
      });
      const holder = await sweepHolder(store!);
      const other = fleet.apis.findIndex((p) => p.child.pid !== holder?.pid);
      expect(holder, 'a node holding the sweep').not.toBeNull();
      const url = fleet.urls[other]!;
      const hold = await call(url, 'POST', '/retention/holds', {
        token,
        body: { business_key: CLAIM, reason: 'coverage litigation' },
      });
      expect(hold.status).toBe(201);
      const remaining = await runs.count({ state: 'Completed' });

      await waitUntil(async () => (await runs.count({ state: 'Completed' })) <= 1, {
        timeoutMs: 180_000,
        intervalMs: 200,
        message: 'the sweep to finish',
      });
      expect(remaining, 'the hold answered while the sweep still had runs to delete').toBeGreaterThan(1);
      expect((await runs.get(heldRun))?.doc.business_key).toBe(CLAIM);
      expect((await call(url, 'GET', `/runs/${heldRun}`, { token })).status).toBe(200);
    }, 300_000);
  },
);
