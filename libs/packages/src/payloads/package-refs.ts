import { pathOf, readStringEntries, type Table } from '../fields.ts';
import { packageNameFaults } from '../package-name.ts';
import type { FileProblems } from '../problems.ts';

/**
 * An array of package names (D9: skills, competencies, contracts and integrations are
 * identified by their package name). Each item that could never name a package is a
 * `package-name` problem; duplicates are dropped.
 */
export function readPackageNames(p: FileProblems, table: Table, key: string, at = ''): string[] {
  const names: string[] = [];
  for (const [i, name] of readStringEntries(p, table, key, at)) {
    const fault = packageNameFaults(name)[0];
    if (fault !== undefined)
      p.add(pathOf(pathOf(at, key), i), 'package-name', `must be a package name: ${fault.message}`);
    else if (!names.includes(name)) names.push(name);
  }
  return names;
}
