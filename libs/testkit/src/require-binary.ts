import { accessSync, constants, readdirSync } from 'node:fs';
import path from 'node:path';

/** Directories searched after PATH: service binaries often live in sbin, outside a user's PATH. */
const EXTRA_DIRS = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/sbin'];

/**
 * Debian's `postgresql` package keeps `initdb` and `postgres` in `/usr/lib/postgresql/<ver>/bin`,
 * on no one's PATH: the newest version installed comes last, after `EXTRA_DIRS`.
 */
function postgresqlDirs(): string[] {
  try {
    return readdirSync('/usr/lib/postgresql')
      .filter((version) => /^\d+(\.\d+)?$/.test(version))
      .sort((a, b) => Number(b) - Number(a))
      .map((version) => `/usr/lib/postgresql/${version}/bin`);
  } catch {
    return [];
  }
}

/** The absolute path of an executable named `name`, or undefined when none is installed. */
export function findBinary(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean), ...EXTRA_DIRS, ...postgresqlDirs()];
  for (const dir of dirs) {
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here; try the next directory.
    }
  }
  return undefined;
}

/**
 * The path of a service binary a suite needs (STYLE §5: skip on a laptop, fail in CI). Missing
 * under `CI=true`: throws, so the suite fails instead of silently skipping. Missing elsewhere:
 * warns naming the binary and returns null, for `describe.skipIf(binary === null)`.
 */
export function requireBinary(name: string): string | null {
  const found = findBinary(name);
  if (found) return found;
  const reason = `${name} is not installed (looked in PATH, ${EXTRA_DIRS.join(', ')} and /usr/lib/postgresql/*/bin)`;
  if (process.env.CI === 'true') throw new Error(`${reason}; CI must install it`);
  console.warn(`skipping the suites that need ${name}: ${reason}`);
  return null;
}
