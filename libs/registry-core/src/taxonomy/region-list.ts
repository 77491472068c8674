import type { RegionList } from '@agent-platform/contracts';
import { ISO_REGION_CODES } from '@agent-platform/packages';

let cached: RegionList | null = null;

/**
 * GET /regions: every ISO 3166-1 alpha-2 code a package may target (libs/packages
 * `ISO_REGION_CODES`, the same list the manifest validator accepts), sorted by code, each with
 * its English short name from ICU (Node ships full ICU). Built once: the list never changes
 * while a process runs.
 */
export function regionList(): RegionList {
  if (cached !== null) return cached;
  const names = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'code' });
  const regions = [...ISO_REGION_CODES].sort().map((code) => ({ code, name: names.of(code) ?? code }));
  cached = { regions };
  return cached;
}
