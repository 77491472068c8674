import type { RegistryProvenance, TrustedPublisher } from '@agent-platform/contracts';

/**
 * What a token minted by a trusted-publishing exchange carries beside its scopes and packages
 * (stored in its grant, auth/registry-tokens.ts): the CI token's issuer and the claims kept from
 * it. It lets the token publish versions of its packages although its identity owns none of
 * them, and is what the published version's provenance is made of.
 */
export interface TrustedGrant {
  issuer: string;
  /** String claims of the exchanged token: those some trusted publisher of its packages names, plus RUN_CLAIMS present. */
  claims: Record<string, string>;
}

/**
 * Claims kept in the provenance whenever the CI token carries them, beside the ones the package
 * requires: what identifies the exact run and commit (GitHub Actions: sha, ref, ref_type,
 * workflow_ref, job_workflow_ref, run_id, run_attempt; GitLab CI: commit_sha, ci_config_ref_uri,
 * ci_config_sha, pipeline_id), and the repository and workflow names themselves.
 */
export const RUN_CLAIMS = [
  'repository',
  'workflow',
  'sha',
  'ref',
  'ref_type',
  'workflow_ref',
  'job_workflow_ref',
  'run_id',
  'run_attempt',
  'commit_sha',
  'project_path',
  'pipeline_id',
  'ci_config_ref_uri',
  'ci_config_sha',
] as const;

/** At most this many characters of a kept claim value (a commit sha or ref is far shorter). */
const MAX_CLAIM_VALUE = 500;

/** True when `publisher` names `issuer` and each of its claims is exactly the token's. */
export function publisherMatches(publisher: TrustedPublisher, issuer: string, claims: Readonly<Record<string, unknown>>): boolean {
  return publisher.issuer === issuer && Object.entries(publisher.claims).every(([name, value]) => claims[name] === value);
}

/** The string claims of a token worth keeping: those `publishers` require, and RUN_CLAIMS. */
export function keptClaims(publishers: readonly TrustedPublisher[], claims: Readonly<Record<string, unknown>>): Record<string, string> {
  const names = new Set<string>(RUN_CLAIMS);
  for (const publisher of publishers) for (const name of Object.keys(publisher.claims)) names.add(name);
  const kept: Record<string, string> = {};
  for (const name of [...names].sort()) {
    const value = claims[name];
    if (typeof value === 'string' && value.length <= MAX_CLAIM_VALUE) kept[name] = value;
  }
  return kept;
}

/** The provenance a version published with `grant` records, given the package's matching trusted publishers. */
export function provenanceOf(identity: string, grant: TrustedGrant, matching: readonly TrustedPublisher[]): RegistryProvenance {
  return { kind: 'trusted-publishing', identity, issuer: grant.issuer, claims: keptClaims(matching, grant.claims) };
}
