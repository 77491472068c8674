/**
 * Semver 2.0 versions and the package constraint language of spec §Versioning 3: `*`, `^1.2.3`,
 * `~1.2.3`, `=1.2.3`, `>=`, `<=`, `>`, `<`, comma-joined (AND). Every comparator except `*` names
 * a full MAJOR.MINOR.PATCH version. A bare version (`1.2.3`) means `^1.2.3`, as in Cargo, whose
 * comma-joined syntax this is.
 */

export interface SemVer {
  major: number;
  minor: number;
  patch: number;
  /** Dot-separated identifiers; numeric ones as numbers. Empty for a release. */
  prerelease: (string | number)[];
  build: string[];
}

type Op = '=' | '>' | '>=' | '<' | '<=' | '^' | '~' | '*';
interface Comparator {
  op: Op;
  version: SemVer | undefined;
}

// The regular expression recommended by semver.org, minus the capture names.
const VERSION =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;
const COMPARATOR = /^(>=|<=|>|<|=|\^|~)?\s*(\S+)$/;

export function parseVersion(text: string): SemVer | undefined {
  const match = VERSION.exec(text);
  if (match === null) return undefined;
  const [major, minor, patch] = [match[1], match[2], match[3]].map(Number) as [number, number, number];
  if (![major, minor, patch].every(Number.isSafeInteger)) return undefined;
  const prerelease =
    match[4] === undefined ? [] : match[4].split('.').map((id) => (/^\d+$/.test(id) ? Number(id) : id));
  const build = match[5] === undefined ? [] : match[5].split('.');
  return { major, minor, patch, prerelease, build };
}

export function isVersion(text: string): boolean {
  return parseVersion(text) !== undefined;
}

/** Precedence per semver 2.0 §11: build metadata is ignored; a pre-release sorts before its release. */
export function compareSemVer(a: SemVer, b: SemVer): number {
  const core = a.major - b.major || a.minor - b.minor || a.patch - b.patch;
  if (core !== 0) return Math.sign(core);
  if (a.prerelease.length === 0 || b.prerelease.length === 0)
    return Math.sign(b.prerelease.length - a.prerelease.length);
  for (let i = 0; i < Math.max(a.prerelease.length, b.prerelease.length); i++) {
    const x = a.prerelease[i];
    const y = b.prerelease[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    if (x === y) continue;
    if (typeof x === 'number' && typeof y === 'number') return Math.sign(x - y);
    if (typeof x === 'number') return -1;
    if (typeof y === 'number') return 1;
    return x < y ? -1 : 1;
  }
  return 0;
}

/** Compares two version strings; throws on an invalid one (callers validate first). */
export function compareVersions(a: string, b: string): number {
  return compareSemVer(mustParse(a), mustParse(b));
}

export type Constraint = Comparator[];

/** Undefined when `text` is not a valid constraint. */
export function parseConstraint(text: string): Constraint | undefined {
  const parts = text.split(',').map((p) => p.trim());
  const comparators: Comparator[] = [];
  for (const part of parts) {
    if (part === '*') {
      comparators.push({ op: '*', version: undefined });
      continue;
    }
    const match = COMPARATOR.exec(part);
    const version = match?.[2] === undefined ? undefined : parseVersion(match[2]);
    if (match === null || version === undefined) return undefined;
    comparators.push({ op: (match[1] ?? '^') as Op, version });
  }
  return comparators;
}

export function isConstraint(text: string): boolean {
  return parseConstraint(text) !== undefined;
}

/**
 * True when `version` meets every comparator of `constraint`. A pre-release version only
 * matches when some comparator names a pre-release of the same MAJOR.MINOR.PATCH (so `^1.0.0`
 * never picks `2.0.0-rc.1`, and `*` picks no pre-release), as npm and Cargo do. False when
 * either string is invalid.
 */
export function satisfies(version: string, constraint: string): boolean {
  const v = parseVersion(version);
  const c = parseConstraint(constraint);
  if (v === undefined || c === undefined) return false;
  if (!c.every((comparator) => matches(v, comparator))) return false;
  if (v.prerelease.length === 0) return true;
  return c.some(
    ({ version: w }) =>
      w !== undefined &&
      w.prerelease.length > 0 &&
      w.major === v.major &&
      w.minor === v.minor &&
      w.patch === v.patch,
  );
}

/** The highest of `versions` that satisfies `constraint`; invalid versions are ignored. */
export function maxSatisfying(versions: readonly string[], constraint: string): string | undefined {
  let best: { text: string; version: SemVer } | undefined;
  for (const text of versions) {
    if (!satisfies(text, constraint)) continue;
    const version = mustParse(text);
    if (best === undefined || compareSemVer(version, best.version) > 0) best = { text, version };
  }
  return best?.text;
}

function matches(v: SemVer, { op, version: w }: Comparator): boolean {
  if (op === '*' || w === undefined) return true;
  const cmp = compareSemVer(v, w);
  switch (op) {
    case '=':
      return cmp === 0;
    case '>':
      return cmp > 0;
    case '>=':
      return cmp >= 0;
    case '<':
      return cmp < 0;
    case '<=':
      return cmp <= 0;
    case '~':
      return cmp >= 0 && compareSemVer(v, release(w.major, w.minor + 1, 0)) < 0;
    case '^':
      return cmp >= 0 && compareSemVer(v, caretCeiling(w)) < 0;
  }
}

/** `^1.2.3` < 2.0.0, `^0.2.3` < 0.3.0, `^0.0.3` < 0.0.4: the left-most non-zero part is fixed. */
function caretCeiling(w: SemVer): SemVer {
  if (w.major > 0) return release(w.major + 1, 0, 0);
  if (w.minor > 0) return release(0, w.minor + 1, 0);
  return release(0, 0, w.patch + 1);
}

/** The lowest version of a release line: `x.y.z-0` sorts below every other `x.y.z` pre-release. */
function release(major: number, minor: number, patch: number): SemVer {
  return { major, minor, patch, prerelease: [0], build: [] };
}

function mustParse(text: string): SemVer {
  const version = parseVersion(text);
  if (version === undefined) throw new TypeError(`not a semver version: '${text}'`);
  return version;
}
