import { realpath } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { Errors } from '@agent-platform/domain';

/** True when `path` is `dir` itself or below it (both absolute, normalised). */
function within(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/**
 * The archive file a restore `{path}` may read (docs/backup.md "Restoring"): an absolute path in
 * the backups directory or an `[backup] import_dirs` directory, also once symlinks are resolved.
 * Anything else gets one answer, whether or not the file exists, so that the route is no oracle
 * of which files the platform's user can read.
 */
export async function importablePath(path: string, allowed: readonly string[] | 'anywhere'): Promise<string> {
  if (!isAbsolute(path))
    throw Errors.validation(`path must be absolute, not '${path.slice(0, 200)}'`, { field: 'path' });
  if (allowed === 'anywhere') return path;
  const refuse = () =>
    Errors.validation(
      'path must name an archive in the backups directory or in a directory of [backup] import_dirs (docs/backup.md "Restoring")',
      { field: 'path' },
    );
  const dirs = await Promise.all(allowed.map(async (dir) => realpath(dir).catch(() => resolve(dir))));
  const lexical = resolve(path);
  if (!allowed.some((dir) => within(resolve(dir), lexical)) && !dirs.some((dir) => within(dir, lexical)))
    throw refuse();
  const real = await realpath(lexical).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') throw Errors.notFound('backup file', path);
    throw refuse();
  });
  if (!dirs.some((dir) => within(dir, real))) throw refuse();
  return real;
}
