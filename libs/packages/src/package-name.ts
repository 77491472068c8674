import { PACKAGE_NAME_PATTERN } from '@agent-platform/contracts';
import type { RuleId } from './rules.ts';

export interface Fault {
  rule: RuleId;
  message: string;
}

const NAME = new RegExp(PACKAGE_NAME_PATTERN);

/**
 * What is wrong with a package name (spec §Package manifests): 3-64 characters, lower-case
 * letters, digits and hyphens, starting and ending with a letter or digit, no `--`. Empty when
 * the name is valid. Each fault has its own rule id so an author sees every one at once.
 */
export function packageNameFaults(name: string): Fault[] {
  const faults: Fault[] = [];
  if (name.length < 3 || name.length > 64)
    faults.push({ rule: 'name-length', message: `must be 3-64 characters (got ${name.length})` });
  if (!NAME.test(name)) {
    faults.push({
      rule: 'name-pattern',
      message: 'must be lower-case letters, digits and hyphens, starting and ending with a letter or digit',
    });
  }
  if (name.includes('--'))
    faults.push({ rule: 'no-consecutive-hyphens', message: 'must not contain consecutive hyphens (--)' });
  return faults;
}

export function isPackageName(name: string): boolean {
  return packageNameFaults(name).length === 0;
}
