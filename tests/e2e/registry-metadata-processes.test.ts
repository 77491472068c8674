import { openExampleArchives, repack, type RegistryCallOptions } from '@agent-platform/registry-core/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { callRegistry, startRegistryProcesses, type RegistryProcesses } from '../support/registry-processes.ts';

// Package metadata across registry processes (docs/registry.md "README", "Web page", "Deprecation",
// "Dist-tags", "Downloads", "Reverse dependencies"): two `apps/registry` processes over one data
// dir. What one publishes or sets the other shows at once; downloads answered by either count once
// each, also while one of them is SIGKILLed in the middle of a burst, and the counts survive its
// restart.

let cluster: RegistryProcesses | undefined;
const send = (url: string, method: string, path: string, body: RegistryCallOptions = {}) => callRegistry(url, method, path, undefined, body);

afterAll(async () => {
  await cluster?.close();
});



/** A download's status and its deprecation header; a refused connection (the process was killed) is status 0. */
async function download(url: string, version: string): Promise<{ status: number; deprecated: string | null }> {
  try {
    const response = await fetch(`${url}/packages/loss-summary/${version}/download`);
    await response.arrayBuffer();
    return { status: response.status, deprecated: response.headers.get('x-registry-deprecated') };
  } catch {
    return { status: 0, deprecated: null };
  }
}

describe('package metadata across registry processes', () => {
  it('shows deprecation, dist-tags and dependents set on the other process, and counts every download once', async () => {
    cluster = await startRegistryProcesses('ap-registry-metadata-processes-');
    const examples = await openExampleArchives();
    const [first, second] = await Promise.all([cluster.start('first'), cluster.start('second')]);

    const withReadme = repack(await examples.build('loss-summary'), (files) => files.set('README.md', new TextEncoder().encode('# Loss summary\n\nSummarises a **loss**.\n')));
    expect((await send(first.url, 'POST', '/packages', { archive: withReadme })).status).toBe(201);
    expect((await send(first.url, 'POST', '/packages', { archive: await examples.build('loss-summary', { version: '2.0.0-beta.1' }) })).status).toBe(201);
    expect((await send(second.url, 'PUT', '/packages/loss-summary/deprecation', { json: { message: 'use loss-digest' } })).status).toBe(200);
    expect((await send(second.url, 'PUT', '/packages/loss-summary/dist-tags/next', { json: { version: '2.0.0-beta.1' } })).status).toBe(200);
    expect((await send(first.url, 'GET', '/packages/loss-summary')).body).toMatchObject({
      deprecated: { message: 'use loss-digest' },
      dist_tags: { latest: '1.0.0', next: '2.0.0-beta.1' },
    });
    expect(await download(first.url, '1.0.0')).toEqual({ status: 200, deprecated: 'use%20loss-digest' });

    // The README published on the first is served rendered by the second, on its web page too.
    const readme = await fetch(`${second.url}/packages/loss-summary/readme`);
    expect(await readme.text()).toContain('<h1>Loss summary</h1>\n<p>Summarises a <strong>loss</strong>.</p>');
    const page = await (await fetch(`${second.url}/ui/packages/loss-summary`)).text();
    expect(page).toContain('<strong>loss</strong>');
    expect(page).toContain('use loss-digest');

    // A dependent published on the second process is listed by the first (its search index follows).
    expect((await send(second.url, 'POST', '/packages', { archive: await examples.build('fnol-triage') })).status).toBe(201);
    expect((await send(first.url, 'GET', '/packages/loss-summary/dependents')).body.dependents).toEqual([
      { name: 'fnol-triage', version: '1.0.0', requirement: '^1.0.0' },
    ]);

    // 60 downloads on both processes at once; the first is SIGKILLed while they run.
    const burst = Array.from({ length: 60 }, (_, i) => download(i % 2 === 0 ? first.url : second.url, i % 3 === 0 ? '2.0.0-beta.1' : '1.0.0'));
    await new Promise((resolve) => setTimeout(resolve, 30));
    await first.app.kill();
    const answers = await Promise.all(burst);
    const answered = answers.filter((a) => a.status === 200).length;
    expect(answers.every((a) => a.status === 200 || a.status === 0), JSON.stringify(answers.map((a) => a.status))).toBe(true);
    expect(answered).toBeGreaterThanOrEqual(30); // every download of the second process

    // Every answered download was counted before it went out; a request cut off by the kill may
    // have been counted without an answer, never more than those.
    const again = await cluster.start('first-again');
    const counts = (await send(again.url, 'GET', '/packages/loss-summary/downloads')).body;
    expect(counts.total).toBeGreaterThanOrEqual(1 + answered);
    expect(counts.total).toBeLessThanOrEqual(1 + 60);
    expect(counts.versions.map((v: { version: string }) => v.version)).toEqual(['2.0.0-beta.1', '1.0.0']);
    expect(counts.days).toEqual([{ date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), downloads: counts.total }]);
    expect((await send(second.url, 'GET', '/packages/loss-summary/downloads')).body).toEqual(counts);
    expect((await send(again.url, 'GET', '/packages/loss-summary')).body.dist_tags).toEqual({ latest: '1.0.0', next: '2.0.0-beta.1' });
    await examples.close();
  }, 180_000);
});
