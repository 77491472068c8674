import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validatePackage } from './package-dir.ts';
import { insertAfter, setKey, writeMutated, type Mutation } from './testing/mutate.ts';
import type { FixtureName } from './testing/package-fixtures.ts';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ap-manifest-rules-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

interface Case {
  name: string;
  fixture?: FixtureName;
  mutation: Mutation;
  field: string;
  rule: string;
}

const MINIMAL =
  '[package]\ntype = "contract"\nname = "claims-system"\ntitle = "Claims"\nversion = "1.0.0-rc.1+build.5"\ndescription = "d"\nmin_platform_version = "0.0.1"\n';
const pkg = (lines: string) => ({ manifest: insertAfter('[package]', lines) });
const meta = (lines: string) => ({ manifest: insertAfter('[package.metadata]', lines) });
const append = (text: string) => ({ manifest: (t: string) => `${t}\n${text}\n` });
const set = (key: string, value: string | undefined) => ({ manifest: setKey(key, value) });

// One case per rule of spec §Package manifests (and the rules docs/packages.md adds): a valid
// fixture with one change, and the problem it must produce.
const CASES: Case[] = [
  {
    name: 'file is not TOML',
    mutation: { manifest: () => 'name = = "x"' },
    field: '(file)',
    rule: 'toml-syntax',
  },
  { name: 'unknown section', mutation: append('[extras]\nx = 1'), field: 'extras', rule: 'unknown-key' },
  {
    name: 'unknown [package] key',
    mutation: pkg('author = "me"'),
    field: 'package.author',
    rule: 'unknown-key',
  },
  {
    name: 'unknown metadata key',
    mutation: meta('tags = ["a"]'),
    field: 'package.metadata.tags',
    rule: 'unknown-key',
  },
  {
    name: 'no [package] section',
    mutation: { manifest: () => '[dependencies]\n' },
    field: 'package',
    rule: 'required',
  },
  {
    name: '[package] is not a table',
    mutation: { manifest: () => 'package = "x"\n' },
    field: 'package',
    rule: 'type',
  },
  { name: 'type missing', mutation: set('type', undefined), field: 'package.type', rule: 'required' },
  {
    name: 'type not one of six',
    mutation: set('type', '"tool"'),
    field: 'package.type',
    rule: 'package-type',
  },
  { name: 'type upper case', mutation: set('type', '"Skill"'), field: 'package.type', rule: 'package-type' },
  { name: 'name missing', mutation: set('name', undefined), field: 'package.name', rule: 'required' },
  { name: 'name not a string', mutation: set('name', '5'), field: 'package.name', rule: 'type' },
  { name: 'name too short', mutation: set('name', '"ab"'), field: 'package.name', rule: 'name-length' },
  {
    name: 'name too long',
    mutation: set('name', `"${'a'.repeat(65)}"`),
    field: 'package.name',
    rule: 'name-length',
  },
  {
    name: 'name upper case',
    mutation: set('name', '"Claims-Intake"'),
    field: 'package.name',
    rule: 'name-pattern',
  },
  {
    name: 'name starts with hyphen',
    mutation: set('name', '"-claims"'),
    field: 'package.name',
    rule: 'name-pattern',
  },
  {
    name: 'name ends with hyphen',
    mutation: set('name', '"claims-"'),
    field: 'package.name',
    rule: 'name-pattern',
  },
  {
    name: 'name with underscore',
    mutation: set('name', '"claims_intake"'),
    field: 'package.name',
    rule: 'name-pattern',
  },
  {
    name: 'name with --',
    mutation: set('name', '"claims--intake"'),
    field: 'package.name',
    rule: 'no-consecutive-hyphens',
  },
  { name: 'title missing', mutation: set('title', undefined), field: 'package.title', rule: 'required' },
  { name: 'title blank', mutation: set('title', '"   "'), field: 'package.title', rule: 'non-blank' },
  {
    name: 'version missing',
    mutation: set('version', undefined),
    field: 'package.version',
    rule: 'required',
  },
  { name: 'version not semver', mutation: set('version', '"1.0"'), field: 'package.version', rule: 'semver' },
  {
    name: 'version with v prefix',
    mutation: set('version', '"v1.0.0"'),
    field: 'package.version',
    rule: 'semver',
  },
  {
    name: 'description missing',
    mutation: set('description', undefined),
    field: 'package.description',
    rule: 'required',
  },
  {
    name: 'description blank',
    mutation: set('description', '""'),
    field: 'package.description',
    rule: 'non-blank',
  },
  {
    name: 'description over 500',
    mutation: set('description', `"${'d'.repeat(501)}"`),
    field: 'package.description',
    rule: 'max-length',
  },
  { name: 'license empty', mutation: set('license', '""'), field: 'package.license', rule: 'non-empty' },
  {
    name: 'license with tab',
    mutation: set('license', '"MIT\\tOR Apache-2.0"'),
    field: 'package.license',
    rule: 'single-line',
  },
  {
    name: 'license with newline',
    mutation: set('license', '"MIT\\nApache-2.0"'),
    field: 'package.license',
    rule: 'single-line',
  },
  {
    name: 'min_platform_version missing',
    mutation: set('min_platform_version', undefined),
    field: 'package.min_platform_version',
    rule: 'required',
  },
  {
    name: 'min_platform_version not semver',
    mutation: set('min_platform_version', '"latest"'),
    field: 'package.min_platform_version',
    rule: 'semver',
  },
  {
    name: 'min_platform_version newer',
    mutation: set('min_platform_version', '"0.2.0"'),
    field: 'package.min_platform_version',
    rule: 'min-platform-version',
  },
  {
    name: 'repository not http',
    mutation: set('repository', '"ftp://example.com/x"'),
    field: 'package.metadata.repository',
    rule: 'http-url',
  },
  {
    name: 'homepage without scheme',
    mutation: set('homepage', '"example.com"'),
    field: 'package.metadata.homepage',
    rule: 'http-url',
  },
  {
    name: 'homepage upper-case scheme',
    mutation: set('homepage', '"HTTPS://example.com"'),
    field: 'package.metadata.homepage',
    rule: 'http-url',
  },
  {
    name: 'metadata not a table',
    fixture: 'contract',
    mutation: { manifest: () => `${MINIMAL}metadata = 1\n` },
    field: 'package.metadata',
    rule: 'type',
  },
  {
    name: '21 keywords',
    mutation: set('keywords', JSON.stringify(Array.from({ length: 21 }, (_, i) => `k${i}`))),
    field: 'package.metadata.keywords',
    rule: 'max-items',
  },
  {
    name: 'empty keyword',
    mutation: set('keywords', '["claims", ""]'),
    field: 'package.metadata.keywords[1]',
    rule: 'keyword-length',
  },
  {
    name: 'keyword over 50',
    mutation: set('keywords', `["${'k'.repeat(51)}"]`),
    field: 'package.metadata.keywords[0]',
    rule: 'keyword-length',
  },
  {
    name: 'keyword not a string',
    mutation: set('keywords', '["claims", 5]'),
    field: 'package.metadata.keywords[1]',
    rule: 'type',
  },
  {
    name: 'keywords not an array',
    mutation: set('keywords', '"claims"'),
    field: 'package.metadata.keywords',
    rule: 'type',
  },
  {
    name: 'category not a string',
    mutation: set('categories', '[1]'),
    field: 'package.metadata.categories[0]',
    rule: 'type',
  },
  {
    name: 'category blank',
    mutation: set('categories', '[""]'),
    field: 'package.metadata.categories[0]',
    rule: 'non-blank',
  },
  {
    name: 'region unknown',
    mutation: set('regions', '["us", "XX"]'),
    field: 'package.metadata.regions[1]',
    rule: 'region-code',
  },
  {
    name: 'region alpha-3',
    mutation: set('regions', '["USA"]'),
    field: 'package.metadata.regions[0]',
    rule: 'region-code',
  },
  {
    name: 'region reserved (UK)',
    mutation: set('regions', '["UK"]'),
    field: 'package.metadata.regions[0]',
    rule: 'region-code',
  },
  {
    name: 'dependency name short',
    mutation: append('[dependencies]\nab = "^1.0.0"'),
    fixture: 'contract',
    field: 'dependencies.ab',
    rule: 'dependency-name',
  },
  {
    name: 'dependency name long',
    mutation: append(`[dependencies]\n${'d'.repeat(65)} = "^1.0.0"`),
    fixture: 'contract',
    field: `dependencies.${'d'.repeat(65)}`,
    rule: 'dependency-name',
  },
  {
    name: 'dependency on itself',
    mutation: append('[dependencies]\nclaims-system = "^1.0.0"'),
    fixture: 'contract',
    field: 'dependencies.claims-system',
    rule: 'self-dependency',
  },
  {
    name: 'dependency constraint without version',
    mutation: set('claims-triage', '">="'),
    field: 'dependencies.claims-triage',
    rule: 'version-constraint',
  },
  {
    name: 'dependency constraint partial version',
    mutation: set('claims-triage', '"^1.0"'),
    field: 'dependencies.claims-triage',
    rule: 'version-constraint',
  },
  {
    name: 'dependency constraint empty',
    mutation: set('claims-triage', '""'),
    field: 'dependencies.claims-triage',
    rule: 'version-constraint',
  },
  {
    name: 'dependency constraint bad operator',
    mutation: set('claims-triage', '"=>1.0.0"'),
    field: 'dependencies.claims-triage',
    rule: 'version-constraint',
  },
  {
    name: 'dependency constraint trailing comma',
    mutation: set('claims-triage', '">=1.0.0,"'),
    field: 'dependencies.claims-triage',
    rule: 'version-constraint',
  },
  {
    name: 'dependency value a table',
    mutation: set('claims-triage', '{ version = "1.0.0" }'),
    field: 'dependencies.claims-triage',
    rule: 'type',
  },
  {
    name: '[standards] on an agent template',
    mutation: append('[standards]\nmcp_compatible = true'),
    field: 'standards',
    rule: 'standards-type',
  },
  {
    name: '[standards] on a contract',
    fixture: 'contract',
    mutation: append('[standards]\nopenapi_spec = "x.yaml"'),
    field: 'standards',
    rule: 'standards-type',
  },
  {
    name: 'standards.mcp_compatible not a boolean',
    fixture: 'skill',
    mutation: set('mcp_compatible', '"yes"'),
    field: 'standards.mcp_compatible',
    rule: 'type',
  },
  {
    name: 'standards.idempotent_keys not a boolean',
    fixture: 'skill',
    mutation: { manifest: insertAfter('[standards]', 'idempotent_keys = "yes"') },
    field: 'standards.idempotent_keys',
    rule: 'type',
  },
  {
    name: 'standards.openapi_spec not a string',
    fixture: 'skill',
    mutation: set('openapi_spec', '1'),
    field: 'standards.openapi_spec',
    rule: 'type',
  },
  {
    name: 'unknown standards key',
    fixture: 'skill',
    mutation: { manifest: insertAfter('[standards]', 'a2a = true') },
    field: 'standards.a2a',
    rule: 'unknown-key',
  },
  {
    name: '[implements] on a skill',
    fixture: 'skill',
    mutation: append('[implements.claims-system]\nversion = "^1.0.0"'),
    field: 'implements',
    rule: 'implements-type',
  },
  {
    name: 'implements key not a package name',
    fixture: 'mcp',
    mutation: append('[implements.Claims_System]\nversion = "^1.0.0"'),
    field: 'implements.Claims_System',
    rule: 'contract-name',
  },
  {
    name: 'implements version missing',
    fixture: 'mcp',
    mutation: { manifest: (t) => t.replace('version = "^1.0.0"\n', '') },
    field: 'implements.claims-system.version',
    rule: 'required',
  },
  {
    name: 'implements version not a constraint',
    fixture: 'mcp',
    mutation: { manifest: (t) => t.replace('version = "^1.0.0"', 'version = "one"') },
    field: 'implements.claims-system.version',
    rule: 'version-constraint',
  },
  {
    name: 'implements tool_map value not a string',
    fixture: 'mcp',
    mutation: set('tool_map', '{ create_claim = 1 }'),
    field: 'implements.claims-system.tool_map.create_claim',
    rule: 'type',
  },
  {
    name: 'implements field_map value not a string',
    fixture: 'mcp',
    mutation: set('policy_number', 'true'),
    field: 'implements.claims-system.field_map.create_claim.policy_number',
    rule: 'type',
  },
  {
    name: 'implements unknown key',
    fixture: 'mcp',
    mutation: insertAfterImplements('transport = "stdio"'),
    field: 'implements.claims-system.transport',
    rule: 'unknown-key',
  },
  {
    name: 'tool_map points at no adapter operation',
    fixture: 'adapter',
    mutation: set('tool_map', '{ create_claim = "open_claim" }'),
    field: 'implements.claims-system.tool_map.create_claim',
    rule: 'tool-map-target',
  },
  {
    name: 'content_hash malformed',
    mutation: append('[signing]\ncontent_hash = "md5:abc"'),
    field: 'signing.content_hash',
    rule: 'content-hash-format',
  },
  {
    name: 'content_hash upper-case hex',
    mutation: append(`[signing]\ncontent_hash = "sha256:${'A'.repeat(64)}"`),
    field: 'signing.content_hash',
    rule: 'content-hash-format',
  },
  {
    name: 'content_hash stale',
    mutation: append(`[signing]\ncontent_hash = "sha256:${'0'.repeat(64)}"`),
    field: 'signing.content_hash',
    rule: 'content-hash-mismatch',
  },
  {
    name: '[signing] without content_hash',
    mutation: append('[signing]'),
    field: 'signing.content_hash',
    rule: 'required',
  },
  {
    name: 'unknown [signing] key',
    mutation: append('[signing]\nsignature = "x"'),
    field: 'signing.signature',
    rule: 'unknown-key',
  },
];

function insertAfterImplements(line: string): Mutation {
  return { manifest: insertAfter('[implements.claims-system]', line) };
}

describe('package.toml rules', () => {
  it.each(CASES)('$name -> $rule at $field', async ({ fixture, mutation, field, rule }) => {
    const dir = await writeMutated(root, fixture ?? 'agent', mutation);
    const report = await validatePackage(dir, { platformVersion: '0.1.0' });
    expect(report.ok).toBe(false);
    expect(report.manifest).toBeUndefined();
    expect(report.problems).toContainEqual(expect.objectContaining({ file: 'package.toml', field, rule }));
  });

  it('reports every fault of one file at once', async () => {
    const dir = await writeMutated(root, 'agent', {
      manifest: (t) =>
        setKey('name', '"Bad--Name"')(setKey('version', '"1"')(setKey('description', undefined)(t))),
    });
    const report = await validatePackage(dir, { platformVersion: '0.1.0' });
    expect(report.problems.map((p) => `${p.field} ${p.rule}`).sort()).toEqual([
      'package.description required',
      'package.name name-pattern',
      'package.name no-consecutive-hyphens',
      'package.version semver',
    ]);
  });

  it('normalizes the manifest: regions upper case and deduplicated, absent tables empty', async () => {
    const dir = await writeMutated(root, 'contract', { manifest: setKey('regions', '["us", "Gb", "US"]') });
    const report = await validatePackage(dir, { platformVersion: '0.1.0' });
    expect(report.problems).toEqual([]);
    expect(report.manifest?.package.metadata.regions).toEqual(['US', 'GB']);
    expect(report.manifest?.dependencies).toEqual({});
    expect(report.manifest?.implements).toEqual({});
    expect(report.manifest?.standards).toBeUndefined();
  });

  it('accepts a min_platform_version equal to or older than the platform, and refuses a newer one', async () => {
    const dir = await writeMutated(root, 'agent', { manifest: setKey('min_platform_version', '"1.4.0"') });
    expect((await validatePackage(dir, { platformVersion: '1.4.0' })).ok).toBe(true);
    expect((await validatePackage(dir, { platformVersion: '2.0.0' })).ok).toBe(true);
    expect((await validatePackage(dir, { platformVersion: '1.3.9' })).problems).toContainEqual(
      expect.objectContaining({ rule: 'min-platform-version' }),
    );
  });

  it('accepts a manifest without license, metadata or dependencies', async () => {
    const dir = await writeMutated(root, 'contract', { manifest: () => MINIMAL });
    const report = await validatePackage(dir, { platformVersion: '0.1.0' });
    expect(report.problems).toEqual([]);
    expect(report.manifest?.package).toEqual({
      type: 'contract',
      name: 'claims-system',
      title: 'Claims',
      version: '1.0.0-rc.1+build.5',
      description: 'd',
      min_platform_version: '0.0.1',
      metadata: { keywords: [], categories: [], regions: [] },
    });
  });

  it('refuses a package.toml that is not UTF-8', async () => {
    const dir = await writeMutated(root, 'agent');
    await writeFile(join(dir, 'package.toml'), Buffer.from([0x5b, 0xff, 0xfe, 0x5d]));
    const report = await validatePackage(dir);
    expect(report.problems).toContainEqual({
      file: 'package.toml',
      field: '(file)',
      rule: 'utf8',
      message: 'must be UTF-8 text',
    });
  });
});
