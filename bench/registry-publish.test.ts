import { loadArchive } from '@agent-platform/packages';
import { describe, expect, it } from 'vitest';
import { buildPublishArchives } from './registry-publish.ts';

describe('registry publish bench archives', () => {
  it('are distinct, valid archives with their content hash set, new names first and then new versions', async () => {
    const archives = await buildPublishArchives(7, 3);
    const loaded = archives.map((a) => loadArchive(a, { platformVersion: '' })); // throws on any problem, a stale hash included
    expect(loaded.map((p) => `${p.manifest.package.name}@${p.manifest.package.version}`)).toEqual([
      'publish-bench-0@1.0.0',
      'publish-bench-1@1.0.0',
      'publish-bench-2@1.0.0',
      'publish-bench-0@1.1.0',
      'publish-bench-1@1.1.0',
      'publish-bench-2@1.1.0',
      'publish-bench-0@1.2.0',
    ]);
    expect(loaded.every((p) => p.manifest.signing?.content_hash === p.content_hash)).toBe(true);
    expect(new Set(loaded.map((p) => p.content_hash)).size).toBe(7);
    expect(loaded.every((p) => p.manifest.package.type === 'skill')).toBe(true);
  });
});
