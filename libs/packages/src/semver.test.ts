import { describe, expect, it } from 'vitest';
import {
  compareVersions,
  isConstraint,
  isVersion,
  maxSatisfying,
  parseVersion,
  satisfies,
} from './semver.ts';

describe('semver versions', () => {
  it.each([
    '0.0.0',
    '1.2.3',
    '10.20.30',
    '1.0.0-alpha',
    '1.0.0-alpha.1',
    '1.0.0-0.3.7',
    '1.0.0-x.7.z.92',
    '1.0.0+20130313144700',
    '1.0.0-beta+exp.sha.5114f85',
  ])('accepts %s', (v) => expect(isVersion(v)).toBe(true));

  it.each([
    '1',
    '1.2',
    'v1.2.3',
    '01.2.3',
    '1.02.3',
    '1.2.3-01',
    '1.2.3-',
    '1.2.3+',
    '1.2.3.4',
    ' 1.2.3',
    '1.2.3 ',
    '',
    '99999999999999999999.0.0',
  ])('refuses %j', (v) => expect(isVersion(v)).toBe(false));

  it('splits pre-release and build identifiers', () => {
    expect(parseVersion('1.2.3-rc.10+build.7')).toEqual({
      major: 1,
      minor: 2,
      patch: 3,
      prerelease: ['rc', 10],
      build: ['build', '7'],
    });
  });

  it('orders versions by semver 2.0 precedence', () => {
    const ordered = [
      '1.0.0-alpha',
      '1.0.0-alpha.1',
      '1.0.0-alpha.beta',
      '1.0.0-beta',
      '1.0.0-beta.2',
      '1.0.0-beta.11',
      '1.0.0-rc.1',
      '1.0.0',
      '1.0.1',
      '1.1.0',
      '2.0.0',
      '10.0.0',
    ];
    const shuffled = [...ordered].reverse();
    expect(shuffled.sort(compareVersions)).toEqual(ordered);
  });

  it('ignores build metadata when comparing', () => {
    expect(compareVersions('1.0.0+a', '1.0.0+b')).toBe(0);
  });

  it('throws when asked to compare an invalid version', () => {
    expect(() => compareVersions('1.0', '1.0.0')).toThrow(/not a semver version/);
  });
});

describe('semver constraints', () => {
  it.each([
    ['*', '0.0.1', true],
    ['*', '99.0.0', true],
    ['^1.2.3', '1.2.3', true],
    ['^1.2.3', '1.9.0', true],
    ['^1.2.3', '2.0.0', false],
    ['^1.2.3', '1.2.2', false],
    ['^0.2.3', '0.2.9', true],
    ['^0.2.3', '0.3.0', false],
    ['^0.0.3', '0.0.3', true],
    ['^0.0.3', '0.0.4', false],
    ['~1.2.3', '1.2.9', true],
    ['~1.2.3', '1.3.0', false],
    ['~1.2.3', '1.2.2', false],
    ['=1.2.3', '1.2.3', true],
    ['=1.2.3', '1.2.4', false],
    ['=1.2.3', '1.2.3+build', true],
    ['>=1.2.3', '1.2.3', true],
    ['>=1.2.3', '1.2.2', false],
    ['>1.2.3', '1.2.3', false],
    ['>1.2.3', '1.2.4', true],
    ['<=1.2.3', '1.2.3', true],
    ['<1.2.3', '1.2.3', false],
    ['<1.2.3', '1.2.2', true],
    ['>=1.0.0, <2.0.0', '1.5.0', true],
    ['>=1.0.0, <2.0.0', '2.0.0', false],
    ['>=1.0.0,<1.1.0,=1.0.5', '1.0.5', true],
    ['>= 1.0.0', '1.0.0', true],
    ['1.2.3', '1.4.0', true],
    ['1.2.3', '2.0.0', false],
  ])('%s matches %s: %s', (constraint, version, expected) => {
    expect(satisfies(version, constraint)).toBe(expected);
  });

  it('matches a pre-release only when a comparator names a pre-release of the same version', () => {
    expect(satisfies('2.0.0-rc.1', '^1.0.0')).toBe(false);
    expect(satisfies('2.0.0-rc.1', '*')).toBe(false);
    expect(satisfies('1.0.0-rc.1', '>=0.9.0')).toBe(false);
    expect(satisfies('1.0.0-rc.2', '>=1.0.0-rc.1')).toBe(true);
    expect(satisfies('1.0.0-rc.2', '^1.0.0-rc.1')).toBe(true);
    expect(satisfies('1.0.1-rc.1', '^1.0.0-rc.1')).toBe(false);
  });

  it.each([
    '',
    '^',
    '>=',
    '1',
    '^1.2',
    '~1',
    '1.x',
    '=>1.0.0',
    '>=1.0.0,',
    ',',
    '^1.0.0 || ^2.0.0',
    '>=1.0.0 <2.0.0',
    'latest',
  ])('refuses the constraint %j (a constraint names a full version, except *)', (c) => {
    expect(isConstraint(c)).toBe(false);
    expect(satisfies('1.0.0', c)).toBe(false);
  });

  it('is false for an invalid version', () => {
    expect(satisfies('1.0', '*')).toBe(false);
  });

  it('picks the highest satisfying version, skipping invalid ones', () => {
    const versions = ['1.0.0', '1.4.2', 'junk', '1.10.0', '2.0.0', '2.1.0-beta.1'];
    expect(maxSatisfying(versions, '^1.0.0')).toBe('1.10.0');
    expect(maxSatisfying(versions, '*')).toBe('2.0.0');
    expect(maxSatisfying(versions, '~1.4.0')).toBe('1.4.2');
    expect(maxSatisfying(versions, '>=2.1.0-beta.0')).toBe('2.1.0-beta.1');
    expect(maxSatisfying(versions, '^3.0.0')).toBeUndefined();
    expect(maxSatisfying(versions, 'nonsense')).toBeUndefined();
  });
});
