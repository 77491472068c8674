import type { PackageMetadata } from '@agent-platform/contracts';
import {
  checkKeys,
  isHttpUrl,
  pathOf,
  readString,
  readStringArray,
  readStringEntries,
  readTable,
  type Table,
} from './fields.ts';
import type { FileProblems } from './problems.ts';
import { normalizeRegion } from './regions.ts';

const AT = 'package.metadata';
const KEYS = ['repository', 'homepage', 'keywords', 'categories', 'regions'] as const;
const MAX_KEYWORDS = 20;
const MAX_KEYWORD_LENGTH = 50;

/** `[package.metadata]`, normalized: absent lists are empty, regions upper case. */
export function checkMetadata(p: FileProblems, pkg: Table): PackageMetadata {
  const table = readTable(p, pkg, 'metadata', 'package') ?? {};
  checkKeys(p, table, KEYS, AT);
  const metadata: PackageMetadata = {
    keywords: checkKeywords(p, table),
    categories: readStringArray(p, table, 'categories', AT, { nonBlank: true }),
    regions: readRegions(p, table, AT),
  };
  for (const key of ['repository', 'homepage'] as const) {
    const url = readString(p, table, key, AT);
    if (url === undefined) continue;
    if (isHttpUrl(url)) metadata[key] = url;
    else p.add(pathOf(AT, key), 'http-url', 'must be a URL starting with http:// or https://');
  }
  return metadata;
}

function checkKeywords(p: FileProblems, table: Table): string[] {
  const entries = readStringEntries(p, table, 'keywords', AT);
  const field = pathOf(AT, 'keywords');
  if (Array.isArray(table.keywords) && table.keywords.length > MAX_KEYWORDS) {
    p.add(field, 'max-items', `must have at most ${MAX_KEYWORDS} keywords (got ${table.keywords.length})`);
  }
  for (const [i, keyword] of entries) {
    if (keyword.length < 1 || keyword.length > MAX_KEYWORD_LENGTH) {
      p.add(
        pathOf(field, i),
        'keyword-length',
        `must be 1-${MAX_KEYWORD_LENGTH} characters (got ${keyword.length})`,
      );
    }
  }
  return entries.map(([, keyword]) => keyword);
}

/** `regions`: ISO 3166-1 alpha-2 codes, any case in, upper case and deduplicated out; empty = every region. */
export function readRegions(p: FileProblems, table: Table, at: string): string[] {
  const regions: string[] = [];
  for (const [i, input] of readStringEntries(p, table, 'regions', at)) {
    const code = normalizeRegion(input);
    if (code === undefined) {
      const got = JSON.stringify(input.slice(0, 20));
      p.add(
        pathOf(pathOf(at, 'regions'), i),
        'region-code',
        `must be an ISO 3166-1 alpha-2 code such as US or GB (got ${got})`,
      );
    } else if (!regions.includes(code)) {
      regions.push(code);
    }
  }
  return regions;
}
