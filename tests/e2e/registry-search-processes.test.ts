import { openExampleArchives, renamed } from '@agent-platform/registry-core/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { startRegistryProcesses, type RegistryProcesses } from '../support/registry-processes.ts';

// Search kept up to date in place across registry processes (issue 25, docs/registry-search.md
// "How the index keeps up"): two `apps/registry` processes over one data dir (one embedded store,
// one archive directory). What one publishes or yanks, the other's next search shows, without
// reloading its index; one of them SIGKILLed in the middle of a burst of publishes: every publish
// it answered 201 for is found by the other at once, and the killed one, started again, finds
// everything that was stored.

let cluster: RegistryProcesses | undefined;

afterAll(async () => {
  await cluster?.close();
});

interface Hit {
  name: string;
  latest: string;
}


async function search(url: string, q: string, perPage = 100): Promise<{ total: number; results: Hit[] }> {
  const response = await fetch(`${url}/search?q=${encodeURIComponent(q)}&per_page=${perPage}`);
  expect(response.status).toBe(200);
  return (await response.json()) as { total: number; results: Hit[] };
}

async function publish(url: string, archive: Uint8Array): Promise<number> {
  const response = await fetch(`${url}/packages`, { method: 'POST', headers: { 'content-type': 'application/gzip' }, body: archive });
  await response.text();
  return response.status;
}

describe('registry search across registry processes', () => {
  it('follows publishes and yanks of another process at once, and survives one killed mid-burst', async () => {
    cluster = await startRegistryProcesses('ap-registry-search-processes-');
    const examples = await openExampleArchives();
    const [first, second] = await Promise.all([cluster.start('first'), cluster.start('second')]);

    // Both have searched (their indexes are loaded) before anything is published.
    expect((await search(first.url, 'loss')).total).toBe(0);
    expect((await search(second.url, 'loss')).total).toBe(0);

    expect(await publish(first.url, await examples.build('loss-summary'))).toBe(201);
    expect((await search(second.url, 'loss-summary')).results[0]).toMatchObject({ name: 'loss-summary', latest: '1.0.0' });
    expect(await publish(second.url, await examples.build('loss-summary', { version: '1.1.0' }))).toBe(201);
    expect((await search(first.url, 'loss-summary')).results[0]).toMatchObject({ name: 'loss-summary', latest: '1.1.0' });

    const yank = await fetch(`${first.url}/packages/loss-summary/1.1.0/yank`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'wrong rates' }),
    });
    expect(yank.status).toBe(200);
    expect((await search(second.url, 'loss-summary')).results[0]).toMatchObject({ name: 'loss-summary', latest: '1.0.0' });

    // A burst of new packages at the first process, which is SIGKILLed while they are in flight.
    const base = await examples.build('loss-summary');
    const burst = Array.from({ length: 40 }, (_, i) =>
      renamed(base, `burst-${i}`),
    );
    // Four in flight at a time; the kill comes with the eighth 201, so others are in flight then.
    const statuses: number[] = burst.map(() => 0);
    let next = 0;
    let created = 0;
    let killed: Promise<void> | undefined;
    const publisher = async () => {
      for (let i = next++; i < burst.length; i = next++) {
        statuses[i] = await publish(first.url, burst[i]!).catch(() => 0);
        if (statuses[i] === 0) return;
        if (statuses[i] === 201 && ++created === 8) killed = first.app.kill();
      }
    };
    await Promise.all([publisher(), publisher(), publisher(), publisher()]);
    await killed;
    const answered = statuses.flatMap((status, i) => (status === 201 ? [`burst-${i}`] : []));
    expect(answered.length, `statuses ${statuses.join(',')}`).toBeGreaterThan(0);
    expect(answered.length, `statuses ${statuses.join(',')}`).toBeLessThan(burst.length);

    // Every publish answered 201 is found by the other process at once.
    const found = (await search(second.url, 'burst')).results.map((hit) => hit.name);
    for (const name of answered) expect(found).toContain(name);

    // Started again, the killed process loads its index from the store: everything stored is found,
    // and the other process keeps following its publishes.
    const again = await cluster.start('first-again');
    const stored: string[] = [];
    for (let i = 0; i < burst.length; i++) {
      if ((await fetch(`${again.url}/packages/burst-${i}`)).status === 200) stored.push(`burst-${i}`);
    }
    expect((await search(again.url, 'burst')).results.map((hit) => hit.name).sort()).toEqual([...stored].sort());
    expect(await publish(again.url, renamed(base, 'after-restart'))).toBe(201);
    expect((await search(second.url, 'after-restart')).results.map((hit) => hit.name)).toEqual(['after-restart']);
    await examples.close();
  }, 180_000);
});
