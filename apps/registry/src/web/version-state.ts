import type { RegistryVersion, Revocation } from '@agent-platform/contracts';

/** One mark of a version's state in the versions table. */
export interface StateMark {
  label: 'yanked' | 'security-yanked' | 'revoked';
  tone: 'warn' | 'bad';
  /** Why and when, for the mark's title. */
  detail: string;
}

/**
 * A version's marks: yanked (skipped by new resolution, still installable by exact version),
 * security-yanked (yanked and put on the revocation feed), revoked (on the feed: platforms refuse
 * it, even after an un-yank, docs/registry.md "Yank, un-yank and security yank").
 */
export function versionState(version: RegistryVersion, revocations: readonly Revocation[]): StateMark[] {
  const marks: StateMark[] = [];
  const yank = version.yank;
  if (version.yanked && yank !== null)
    marks.push(
      yank.security
        ? { label: 'security-yanked', tone: 'bad', detail: `${yank.reason} (${yank.yanked_by}, ${yank.yanked_at})` }
        : { label: 'yanked', tone: 'warn', detail: `${yank.reason} (${yank.yanked_by}, ${yank.yanked_at})` },
    );
  const revoked = revocations.filter((r) => r.version === version.version);
  const last = revoked.at(-1);
  if (last !== undefined) marks.push({ label: 'revoked', tone: 'bad', detail: `${last.reason} (revocation ${last.seq}, ${last.revoked_at})` });
  return marks;
}

/**
 * "Published from <repository> by <identity>" for a version published through trusted publishing;
 * null without provenance. Read tolerantly: a registry version written before provenance existed
 * has no such field.
 */
export function provenanceOf(version: RegistryVersion): string | null {
  const provenance = (version as { provenance?: unknown }).provenance;
  if (typeof provenance !== 'object' || provenance === null) return null;
  const { identity, issuer, claims } = provenance as { identity?: unknown; issuer?: unknown; claims?: unknown };
  if (typeof identity !== 'string') return null;
  const repository = typeof claims === 'object' && claims !== null ? (claims as Record<string, unknown>).repository : undefined;
  const from = typeof repository === 'string' ? repository : typeof issuer === 'string' ? issuer : 'a trusted publisher';
  return `Published from ${from} by ${identity}`;
}
