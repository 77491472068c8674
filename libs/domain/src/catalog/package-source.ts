import { stat } from 'node:fs/promises';
import { loadPackage, PackageError, type LoadedPackage } from '@agent-platform/packages';
import { Errors } from '../errors/errors.ts';

/** Where the catalog reads packages from. Today: local directories; the registry comes later. */
export interface PackageSource {
  /**
   * The validated package in `dir`; null when nothing exists at `dir`. A package that breaks a
   * rule is a `ValidationError` whose details list every problem (docs/packages.md).
   */
  load(dir: string): Promise<LoadedPackage | null>;
}

/** Reads package directories (DECISIONS D4), refusing any that needs a newer platform than `platformVersion`. */
export function directoryPackageSource(platformVersion: string): PackageSource {
  return {
    async load(dir) {
      if ((await stat(dir).catch(() => null)) === null) return null;
      try {
        return await loadPackage(dir, { platformVersion });
      } catch (error) {
        if (error instanceof PackageError)
          throw Errors.validation(error.message, { path: dir, problems: error.problems });
        throw error;
      }
    },
  };
}
