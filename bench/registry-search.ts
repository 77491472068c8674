import type { PackageType } from '@agent-platform/contracts';
import type { SeedVersion } from '@agent-platform/registry-core/testing';
import type { BenchRequest } from './target.ts';

/**
 * The registry search benchmark's data (issue 12: search over 10,000 published packages, p99 <=
 * 50 ms): a deterministic corpus of packages that look like what insurance publishers ship, and
 * the mix of queries the load cycles through. The server (servers/registry-search.ts) seeds the
 * corpus; the target (targets/registry-search.ts) drives the mix.
 */

const LINES = ['motor', 'home', 'marine', 'cyber', 'life', 'health', 'travel', 'pet', 'commercial', 'liability'];

/** Topic words, with the taxonomy category a package about them sits in. */
const TOPICS: Array<[string, string]> = [
  ['claims', 'insurance/claims'],
  ['fnol', 'insurance/claims/fnol'],
  ['triage', 'insurance/claims/triage'],
  ['settlement', 'insurance/claims/settlement'],
  ['subrogation', 'insurance/claims/subrogation'],
  ['underwriting', 'insurance/underwriting'],
  ['pricing', 'insurance/underwriting/pricing'],
  ['submission', 'insurance/underwriting/submissions'],
  ['policy', 'insurance/policy'],
  ['endorsement', 'insurance/policy/endorsements'],
  ['renewal', 'insurance/policy/renewals'],
  ['billing', 'insurance/billing'],
  ['fraud', 'insurance/fraud'],
  ['service', 'insurance/customer-service'],
  ['complaints', 'insurance/compliance/complaints'],
  ['reporting', 'insurance/compliance/regulatory-reporting'],
  ['broker', 'insurance/distribution'],
  ['reinsurance', 'insurance/reinsurance'],
  ['reserving', 'insurance/actuarial'],
  ['documents', 'data/extraction'],
  ['address', 'data/enrichment'],
  ['sanctions', 'security'],
  ['email', 'integrations/communications'],
  ['payments', 'integrations/payments'],
  ['core', 'integrations/core-systems'],
];

/** Roles, with the package type a package of that role usually has. */
const ROLES: Array<[string, PackageType]> = [
  ['intake', 'agent-template'],
  ['assistant', 'agent-template'],
  ['router', 'workflow-template'],
  ['pipeline', 'workflow-template'],
  ['checker', 'skill'],
  ['scorer', 'skill'],
  ['summarizer', 'skill'],
  ['extractor', 'skill'],
  ['handling', 'competency'],
  ['review', 'competency'],
  ['connector', 'integration'],
  ['gateway', 'integration'],
  ['model', 'contract'],
  ['api', 'contract'],
  ['notifier', 'skill'],
  ['auditor', 'competency'],
];

const PHRASES = [
  'reads the loss report and fills the claim',
  'scores severity from photos and notes',
  'checks coverage against the policy wording',
  'drafts letters to claimants and brokers',
  'flags duplicate and suspicious submissions',
  'keeps reserves in line with the adjuster notes',
  'answers policyholders in plain language',
  'extracts fields from PDFs, emails and scans',
  'routes work to the right desk by line and size',
  'calls the core system through its REST API',
  'summarizes long files for a quick decision',
  'tracks deadlines set by the regulator',
  'enriches addresses with flood and fire data',
  'prices a risk from rating tables',
  'screens parties against sanctions lists',
  'posts payments and reconciles bordereaux',
];

const REGIONS = ['GB', 'US', 'CA', 'DE', 'FR', 'IE', 'NL', 'ES', 'IT', 'AU', 'NZ', 'SG', 'JP', 'IN', 'ZA', 'BR', 'MX', 'CH', 'SE', 'PL'];

/** mulberry32: a small seeded generator, so that every run seeds the same corpus. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const capital = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);

/**
 * `count` packages (1 to 3 versions each, about one in twenty with its newest version yanked),
 * every name unique: line x topic x role gives 4,000 names, a numeric suffix the rest.
 */
export function registrySearchCorpus(count: number, seed = 12): SeedVersion[] {
  const next = random(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const combos = LINES.length * TOPICS.length * ROLES.length;
  const seeds: SeedVersion[] = [];
  for (let i = 0; i < count; i++) {
    const line = LINES[i % LINES.length]!;
    const [topic, category] = TOPICS[Math.floor(i / LINES.length) % TOPICS.length]!;
    const [role, type] = ROLES[Math.floor(i / (LINES.length * TOPICS.length)) % ROLES.length]!;
    const round = Math.floor(i / combos);
    const name = `${line}-${topic}-${role}${round === 0 ? '' : `-${round + 1}`}`;
    const keywords = [...new Set([topic, line, role, pick(TOPICS)[0], ...(next() < 0.5 ? [pick(LINES)] : [])])];
    const categories = next() < 0.3 ? [category, pick(TOPICS)[1]] : [category];
    const regions = next() < 0.6 ? [] : [...new Set([pick(REGIONS), ...(next() < 0.5 ? [pick(REGIONS), pick(REGIONS)] : [])])];
    const base = {
      name,
      type,
      title: `${capital(line)} ${topic} ${role}`,
      description: `${capital(role)} for ${line} ${topic} work: ${pick(PHRASES)}, and ${pick(PHRASES)}.`,
      keywords,
      categories: [...new Set(categories)],
      regions,
      publishedBy: `publisher-${i % 37}`,
    };
    const versions = 1 + Math.floor(next() * 3);
    const yankNewest = versions > 1 && next() < 0.05;
    for (let v = 0; v < versions; v++) seeds.push({ ...base, version: `1.${v}.0`, yanked: yankNewest && v === versions - 1 });
  }
  return seeds;
}

/** The queries the load cycles through: text alone, text with filters, filters alone, the empty list, a miss. */
export const REGISTRY_SEARCH_QUERIES: BenchRequest[] = [
  '/search?q=claims',
  '/search?q=fnol%20intake',
  '/search?q=motor%20claims&region=GB',
  '/search?category=insurance/claims',
  '/search?q=fraud&type=agent-template',
  '/search?keyword=sanctions',
  '/search',
  '/search?q=policy&category=insurance/policy&page=2',
  '/search?q=summar',
  '/search?region=us&type=integration&per_page=50',
  '/search?q=cyber%20underwriting%20scorer',
  '/search?q=home-billing-connector',
  '/search?q=flood%20addresses&category=data',
  '/search?q=nothing-matches-this',
].map((path) => ({ method: 'GET', path }));
