import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RegistryVersion } from '@agent-platform/contracts';
import { loadPackage, type LoadedPackage } from '@agent-platform/packages';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PlatformError } from '../errors/platform-error.ts';
import type { InstalledPackageRecord } from './catalog-records.ts';
import { writePackage, type PackageSpec } from './package-writer.fixture.ts';
import { resolveFromRegistry, type RegistryRoot } from './registry-resolver.ts';
import type { RegistrySource } from './registry-source.ts';

/**
 * The resolution rule (docs/catalog.md "Resolution") over an in-memory registry whose packages
 * are real package directories, loaded and validated as the catalog loads them.
 */

interface Published extends PackageSpec {
  version: string;
  yank?: { reason: string; security?: boolean };
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-resolver-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

let counter = 0;
async function registryOf(published: readonly Published[]) {
  const loaded = new Map<string, LoadedPackage>();
  const versions = new Map<string, RegistryVersion[]>();
  for (const spec of published) {
    const pkgDir = await writePackage(join(dir, String(++counter)), spec);
    loaded.set(`${spec.name}@${spec.version}`, await loadPackage(pkgDir, { platformVersion: '9.9.9' }));
    const record = {
      name: spec.name,
      version: spec.version,
      type: spec.type,
      yanked: spec.yank !== undefined,
      yank: spec.yank === undefined ? null : { reason: spec.yank.reason, security: spec.yank.security ?? false, yanked_at: '2030-01-01T00:00:00Z', yanked_by: 'p' },
    } as RegistryVersion;
    versions.set(spec.name, [...(versions.get(spec.name) ?? []), record]);
  }
  const fetched: string[] = [];
  const source: RegistrySource = {
    url: 'http://registry.test',
    package: async () => null,
    versions: async (name) => versions.get(name) ?? null,
    version: async () => null,
    download: async () => null,
    search: async () => ({ total: 0, page: 1, per_page: 20, results: [] }),
    collection: async () => null,
  };
  const fetch = async (v: RegistryVersion) => {
    fetched.push(`${v.name}@${v.version}`);
    const pkg = loaded.get(`${v.name}@${v.version}`);
    if (pkg === undefined) throw new Error(`not published: ${v.name}@${v.version}`);
    return pkg;
  };
  return { source, fetch, fetched };
}

function installedRecord(name: string, version: string, dependencies: Record<string, string> = {}): InstalledPackageRecord {
  return {
    name,
    version,
    manifest: { dependencies },
    payload: { file: 'SKILL.md', data: {} },
  } as unknown as InstalledPackageRecord;
}

async function resolve(
  published: readonly Published[],
  roots: RegistryRoot[] | string,
  installed: InstalledPackageRecord[] = [],
) {
  const { source, fetch, fetched } = await registryOf(published);
  const rootList = typeof roots === 'string' ? roots.split(' ').map((text) => root(text)) : roots;
  const resolution = await resolveFromRegistry(rootList, {
    source,
    fetch,
    installed: async (name) => installed.find((r) => r.name === name) ?? null,
    installedAll: async () => installed,
  });
  const picked = Object.fromEntries([...resolution.packages].map(([name, pkg]) => [name, pkg.manifest.package.version]));
  return { picked, reused: [...resolution.reused].sort(), fetched };
}

/** `name@constraint` as requested. */
function root(text: string): RegistryRoot {
  const at = text.indexOf('@');
  return { name: text.slice(0, at), constraint: text.slice(at + 1), needed_by: 'the request' };
}

async function failure(promise: Promise<unknown>): Promise<PlatformError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof PlatformError)) throw new Error(`expected a PlatformError, got ${String(error)}`);
  return error;
}

const skill = (version: string, extra: Partial<Published> = {}): Published => ({ type: 'skill', name: 'loss-summary', version, ...extra });
const SKILLS = ['1.0.0', '1.0.5', '1.1.0', '1.2.0', '2.0.0', '2.1.0-rc.1', '2.1.0-rc.2'].map((v) => skill(v));

describe('picking one version', () => {
  it.each([
    ['caret', '^1.0.0', '1.2.0'],
    ['caret from a patch version', '^1.0.5', '1.2.0'],
    ['caret on a 0.x line stays on its minor', '^0.1.0', null],
    ['tilde', '~1.0.0', '1.0.5'],
    ['range', '>=1.0.5, <1.2.0', '1.1.0'],
    ['star: the highest release, no pre-release', '*', '2.0.0'],
    ['exact', '=1.0.5', '1.0.5'],
    ['a bare version is a caret', '1.1.0', '1.2.0'],
    ['a constraint naming a pre-release picks the newest of that line', '^2.1.0-rc.1', '2.1.0-rc.2'],
    ['exact pre-release', '=2.1.0-rc.1', '2.1.0-rc.1'],
    ['a range below a pre-release line ignores it', '>=2.0.0', '2.0.0'],
  ])('%s: %s picks %s', async (_name, constraint, expected) => {
    const published = [...SKILLS, skill('0.1.5'), skill('0.2.0')];
    const { picked } = await resolve(published, [{ name: 'loss-summary', constraint, needed_by: 'the request' }]);
    expect(picked).toEqual({ 'loss-summary': expected ?? '0.1.5' });
  });

  it('skips yanked versions, and refuses an exact pin of one naming the yank', async () => {
    const published = [skill('1.0.0'), skill('1.1.0', { yank: { reason: 'leaks the claimant address', security: true } })];
    expect((await resolve(published, 'loss-summary@^1.0.0')).picked).toEqual({ 'loss-summary': '1.0.0' });
    const error = await failure(resolve(published, 'loss-summary@=1.1.0'));
    expect(error.category).toBe('CatalogError');
    expect(error.message).toBe(
      'loss-summary =1.1.0 (needed by the request): version 1.1.0 is yanked for a security reason: leaks the claimant address; yanked versions are not installed, ask for another version; nothing was installed',
    );
  });

  it('answers NotFound for a requested name the registry does not know, and CatalogError when no version fits', async () => {
    const unknown = await failure(resolve(SKILLS, 'no-such-skill@*'));
    expect(unknown.category).toBe('NotFound');
    expect(unknown.message).toBe("package 'no-such-skill' is not in the registry http://registry.test");
    const none = await failure(resolve(SKILLS, 'loss-summary@^3.0.0'));
    expect(none.category).toBe('CatalogError');
    expect(none.message).toContain('loss-summary: ^3.0.0 (needed by the request): no version satisfies it (published: 1.0.0, 1.0.5');
  });
});

describe('the dependency graph', () => {
  const triage = (version: string, deps: Record<string, string>): Published => ({ type: 'competency', name: 'fnol-triage', version, skills: ['loss-summary'], dependencies: deps });
  const intake = (version: string, deps: Record<string, string>): Published => ({ type: 'agent-template', name: 'claims-intake', version, competencies: ['fnol-triage'], dependencies: deps });

  it('resolves a chain, each at the highest version its dependents allow', async () => {
    const published = [...SKILLS, triage('1.0.0', { 'loss-summary': '^1.0.0' }), triage('1.2.0', { 'loss-summary': '~1.0.0' }), intake('1.0.0', { 'fnol-triage': '^1.0.0' })];
    const { picked } = await resolve(published, 'claims-intake@*');
    expect(picked).toEqual({ 'claims-intake': '1.0.0', 'fnol-triage': '1.2.0', 'loss-summary': '1.0.5' });
  });

  it('re-picks a version when a constraint arrives later, and drops what the old pick needed', async () => {
    const published = [
      ...SKILLS.filter((s) => s.version !== '2.0.0'),
      { type: 'skill', name: 'helper', version: '1.0.0' } as Published,
      triage('1.0.0', { 'loss-summary': '<1.1.0' }),
      // The first pick of loss-summary (2.0.0, for claims-intake's ">=1.0.0") needs helper.
      skill('2.0.0', { dependencies: { helper: '^1.0.0' } }),
      intake('1.0.0', { 'loss-summary': '>=1.0.0', 'fnol-triage': '^1.0.0' }),
    ];
    const { picked, fetched } = await resolve(published, 'claims-intake@*');
    expect(picked).toEqual({ 'claims-intake': '1.0.0', 'fnol-triage': '1.0.0', 'loss-summary': '1.0.5' });
    expect(fetched).toContain('loss-summary@2.0.0');
    expect(fetched).toContain('helper@1.0.0');
  });

  it('names the package, each constraint and who imposed it when no version satisfies them all', async () => {
    const published = [...SKILLS, triage('1.2.0', { 'loss-summary': '^1.0.0' }), intake('2.0.0', { 'loss-summary': '^2.0.0', 'fnol-triage': '^1.2.0' })];
    const error = await failure(resolve(published, 'claims-intake@^2.0.0'));
    expect(error.category).toBe('CatalogError');
    expect(error.message).toBe(
      'loss-summary: ^2.0.0 (needed by claims-intake 2.0.0) and ^1.0.0 (needed by fnol-triage 1.2.0): no version satisfies both (published: 1.0.0, 1.0.5, 1.1.0, 1.2.0, 2.0.0, 2.1.0-rc.1, 2.1.0-rc.2); nothing was installed',
    );
    expect(error.details).toMatchObject({
      name: 'loss-summary',
      constraints: [
        { constraint: '^2.0.0', needed_by: 'claims-intake 2.0.0' },
        { constraint: '^1.0.0', needed_by: 'fnol-triage 1.2.0' },
      ],
    });
  });

  it('reports every missing dependency at once as MissingDependency', async () => {
    const published = [intake('1.0.0', { 'fnol-triage': '^1.0.0', ghost: '^1.0.0' }), triage('1.0.0', { 'loss-summary': '^5.0.0' }), ...SKILLS];
    const error = await failure(resolve(published, 'claims-intake@*'));
    expect(error.category).toBe('MissingDependency');
    expect(error.message).toContain('ghost ^1.0.0 (needed by claims-intake 1.0.0: not in the registry http://registry.test)');
    expect(error.message).toContain('loss-summary ^5.0.0 (needed by fnol-triage 1.0.0: no published version satisfies it');
  });

  it("installs a workflow's agents_required", async () => {
    const published: Published[] = [
      { type: 'workflow-template', name: 'claims-flow', version: '1.0.0', agents: ['claims-intake'] },
      intake('1.0.0', {}),
      intake('1.1.0', {}),
    ];
    expect((await resolve(published, 'claims-flow@*')).picked).toEqual({ 'claims-flow': '1.0.0', 'claims-intake': '1.1.0' });
  });
});

describe('what is installed', () => {
  const needsSkill = (constraint: string): Published => ({ type: 'competency', name: 'fnol-triage', version: '1.0.0', skills: ['loss-summary'], dependencies: { 'loss-summary': constraint } });

  it('reuses an installed dependency that satisfies every constraint, even when a newer one exists', async () => {
    const { picked, reused, fetched } = await resolve([...SKILLS, needsSkill('^1.0.0')], 'fnol-triage@*', [installedRecord('loss-summary', '1.0.0')]);
    expect(picked).toEqual({ 'fnol-triage': '1.0.0' });
    expect(reused).toEqual(['loss-summary']);
    expect(fetched).toEqual(['fnol-triage@1.0.0']);
  });

  it('upgrades an installed dependency that does not satisfy a constraint', async () => {
    const { picked } = await resolve([...SKILLS, needsSkill('^1.1.0')], 'fnol-triage@*', [installedRecord('loss-summary', '1.0.0')]);
    expect(picked).toEqual({ 'fnol-triage': '1.0.0', 'loss-summary': '1.2.0' });
  });

  it('keeps the constraints of installed packages that depend on what it upgrades', async () => {
    const installed = [installedRecord('loss-summary', '1.0.0'), installedRecord('policy-servicing', '1.0.0', { 'loss-summary': '^1.0.0' })];
    expect((await resolve(SKILLS, 'loss-summary@*', installed)).picked).toEqual({ 'loss-summary': '1.2.0' });
    const error = await failure(resolve(SKILLS, 'loss-summary@^2.0.0', installed));
    expect(error.message).toContain('loss-summary: ^2.0.0 (needed by the request) and ^1.0.0 (needed by installed policy-servicing 1.0.0): no version satisfies both');
  });
});
