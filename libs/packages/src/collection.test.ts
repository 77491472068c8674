import { CollectionManifest, type PackageManifest } from '@agent-platform/contracts';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { checkCollectionClosure, validateCollection } from './collection.ts';
import { setKey } from './testing/mutate.ts';

const COLLECTION = `name = "claims-starter"
display_name = "Claims starter"
description = "Intake and triage for a claims team."
version = "1.0.0"
license = "Apache-2.0"
min_platform_version = "0.1.0"
featured = true
tags = ["claims"]
icon = "https://example.com/icon.png"

[author]
name = "Acme"
email = "team@acme.example"
url = "https://acme.example"

[metadata]
categories = ["insurance/claims"]
regions = ["us"]

[[packages]]
name = "claims-intake"
version = "1.2.0"
package_type = "agent-template"
is_dependency = false

[[packages]]
name = "claims-triage"
version = "1.4.0"
package_type = "competency"
is_dependency = true
`;

const options = { platformVersion: '0.1.0' };

describe('COLLECTION.toml', () => {
  it('accepts a complete collection and normalizes it', () => {
    const report = validateCollection(COLLECTION, options);
    expect(report.problems).toEqual([]);
    expect(Value.Check(CollectionManifest, report.collection)).toBe(true);
    expect(report.collection?.metadata.regions).toEqual(['US']);
    expect(report.collection?.packages[1]).toEqual({
      name: 'claims-triage',
      version: '1.4.0',
      package_type: 'competency',
      is_dependency: true,
    });
  });

  it('accepts a minimal collection: optional fields default', () => {
    const minimal =
      'name = "abc"\ndisplay_name = "A"\ndescription = "d"\nversion = "0.1.0"\nlicense = "MIT"\n[[packages]]\nname = "abc-x"\nversion = "1.0.0"\npackage_type = "skill"\n';
    const report = validateCollection(minimal, options);
    expect(report.problems).toEqual([]);
    expect(report.collection).toMatchObject({
      featured: false,
      tags: [],
      metadata: { categories: [], regions: [] },
    });
    expect(report.collection?.packages[0]?.is_dependency).toBe(false);
  });

  it.each([
    ['not TOML', () => 'x = = 1', '(file)', 'toml-syntax'],
    ['unknown key', (t: string) => `owner = "me"\n${t}`, 'owner', 'unknown-key'],
    ['name missing', setKey('name', undefined), 'name', 'required'],
    ['name with --', setKey('name', '"claims--starter"'), 'name', 'no-consecutive-hyphens'],
    ['display_name missing', setKey('display_name', undefined), 'display_name', 'required'],
    ['description over 500', setKey('description', `"${'d'.repeat(501)}"`), 'description', 'max-length'],
    ['version not semver', setKey('version', '"1.0"'), 'version', 'semver'],
    ['license missing', setKey('license', undefined), 'license', 'required'],
    [
      'min_platform_version newer',
      setKey('min_platform_version', '"9.0.0"'),
      'min_platform_version',
      'min-platform-version',
    ],
    ['featured not a boolean', setKey('featured', '"yes"'), 'featured', 'type'],
    ['tags not strings', setKey('tags', '[1]'), 'tags[0]', 'type'],
    ['author without name', (t: string) => t.replace('name = "Acme"\n', ''), 'author.name', 'required'],
    ['author email invalid', setKey('email', '"acme"'), 'author.email', 'email'],
    ['author url invalid', setKey('url', '"acme.example"'), 'author.url', 'http-url'],
    ['region unknown', setKey('regions', '["ZZ"]'), 'metadata.regions[0]', 'region-code'],
    ['packages missing', (t: string) => t.slice(0, t.indexOf('[[packages]]')), 'packages', 'required'],
    [
      'entry name invalid',
      (t: string) => t.replace('name = "claims-intake"', 'name = "Claims"'),
      'packages[0].name',
      'package-name',
    ],
    [
      'entry listed twice',
      (t: string) => t.replace('name = "claims-triage"', 'name = "claims-intake"'),
      'packages[1].name',
      'duplicate-package',
    ],
    [
      'entry version a constraint',
      (t: string) => t.replace('version = "1.2.0"', 'version = "^1.2.0"'),
      'packages[0].version',
      'semver',
    ],
    [
      'entry type unknown',
      (t: string) => t.replace('package_type = "competency"', 'package_type = "tool"'),
      'packages[1].package_type',
      'package-type',
    ],
    [
      'entry unknown key',
      (t: string) => t.replace('is_dependency = false', 'optional = true'),
      'packages[0].optional',
      'unknown-key',
    ],
  ])('%s -> %s %s', (_name, mutate, field, rule) => {
    const report = validateCollection(mutate(COLLECTION), options);
    expect(report.ok).toBe(false);
    expect(report.problems).toContainEqual(expect.objectContaining({ file: 'COLLECTION.toml', field, rule }));
  });
});

describe('collection closure', () => {
  const manifest = (
    name: string,
    type: PackageManifest['package']['type'],
    dependencies: Record<string, string> = {},
  ): PackageManifest => ({
    package: {
      type,
      name,
      title: name,
      version: '1.0.0',
      description: 'd',
      min_platform_version: '0.1.0',
      metadata: { keywords: [], categories: [], regions: [] },
    },
    dependencies,
    implements: {},
  });
  const collection = validateCollection(COLLECTION, options).collection!;

  it('passes when every dependency is listed at a version its constraint accepts', () => {
    const manifests = new Map([
      ['claims-intake', manifest('claims-intake', 'agent-template', { 'claims-triage': '^1.0.0' })],
      ['claims-triage', manifest('claims-triage', 'competency')],
    ]);
    expect(checkCollectionClosure(collection, manifests)).toEqual([]);
  });

  it('names a dependency the collection leaves out, one listed at a wrong version, a wrong type and an unknown package', () => {
    const manifests = new Map([
      [
        'claims-intake',
        manifest('claims-intake', 'agent-template', { 'claims-triage': '^2.0.0', summarize: '*' }),
      ],
      ['claims-triage', manifest('claims-triage', 'skill')],
    ]);
    expect(checkCollectionClosure(collection, manifests).map((p) => `${p.field} ${p.rule}`)).toEqual([
      'packages[0].name dependency-version',
      'packages[0].name missing-dependency',
      'packages[1].package_type package-type-mismatch',
    ]);
    expect(checkCollectionClosure(collection, new Map()).map((p) => p.rule)).toEqual([
      'unknown-package',
      'unknown-package',
    ]);
  });
});
