import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { fixedClock } from '../time/clock.ts';
import { bootstrapFirstKey, claimBootstrap } from './bootstrap-claim.ts';

// Two stores on one file stand for two api nodes sharing the store.
let dir: string;
let nodes: Store[];
const clock = fixedClock('2030-01-01T00:00:00.000Z');

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-bootstrap-'));
  const path = join(dir, 'platform.db');
  nodes = [await openEmbeddedStore({ path, clock: clock.now }), await openEmbeddedStore({ path, clock: clock.now })];
});
afterEach(async () => {
  for (const store of nodes) await store.close();
  await rm(dir, { recursive: true, force: true });
});

describe('bootstrap claim', () => {
  it('lets exactly one of many concurrent claimants through, across nodes', async () => {
    const claims = await Promise.all(Array.from({ length: 10 }, (_, i) => claimBootstrap({ store: nodes[i % 2]!, clock })));
    expect(claims.filter((c) => c !== null)).toHaveLength(1);
  });

  it('is free again once released (the first key was refused)', async () => {
    const claim = await claimBootstrap({ store: nodes[0]!, clock });
    expect(await claimBootstrap({ store: nodes[1]!, clock })).toBeNull();
    await claim!.release();
    expect(await claimBootstrap({ store: nodes[1]!, clock })).not.toBeNull();
  });

  it('expires, so a claimant that died before creating its key blocks nobody for long', async () => {
    expect(await claimBootstrap({ store: nodes[0]!, clock })).not.toBeNull();
    clock.advance(29_000);
    expect(await claimBootstrap({ store: nodes[1]!, clock })).toBeNull();
    clock.advance(2_000);
    expect(await claimBootstrap({ store: nodes[1]!, clock })).not.toBeNull();
  });

  it('never expires once closed: a key exists and the bootstrap stays shut', async () => {
    const claim = await claimBootstrap({ store: nodes[0]!, clock });
    await claim!.close();
    clock.advance(365 * 24 * 3_600_000);
    expect(await claimBootstrap({ store: nodes[1]!, clock })).toBeNull();
  });

  it('creates the first key only while the store is still empty under the claim, and closes the bootstrap', async () => {
    let keys = 1;
    const created: string[] = [];
    const deps = (store: Store) => ({ store, clock, keys: { isEmpty: async () => keys === 0 } });
    expect(await bootstrapFirstKey(deps(nodes[0]!), async () => (created.push('a'), 'a'))).toBeNull();
    keys = 0;
    // The first attempt found a key and closed the bootstrap: an empty store later does not reopen it.
    expect(await bootstrapFirstKey(deps(nodes[1]!), async () => (created.push('b'), 'b'))).toBeNull();
    expect(created).toEqual([]);
  });

  it('frees the claim when creating the key fails, so a corrected request can bootstrap', async () => {
    const deps = { store: nodes[0]!, clock, keys: { isEmpty: async () => true } };
    await expect(bootstrapFirstKey(deps, async () => Promise.reject(new Error('bad name')))).rejects.toThrow('bad name');
    expect(await bootstrapFirstKey(deps, async () => 'first')).toBe('first');
    expect(await bootstrapFirstKey(deps, async () => 'second')).toBeNull();
  });
});

describe('bootstrap claims of two key stores', () => {
  it('never meet: the api bootstrap closed does not close the registry one', async () => {
    const deps = { store: nodes[0]!, clock, keys: { isEmpty: async () => true } };
    expect(await bootstrapFirstKey(deps, async () => 'api-first')).toBe('api-first');
    expect(await bootstrapFirstKey(deps, async () => 'registry-first', 'registry-first-key')).toBe('registry-first');
    expect(await bootstrapFirstKey(deps, async () => 'registry-second', 'registry-first-key')).toBeNull();
  });
});
