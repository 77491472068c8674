import { Subjects, type Revocation, type RevocationFeed } from '@agent-platform/contracts';
import type { RevocationRecord } from '../registry-records.ts';
import { signRevocationFeed } from '../revocations/revocation-feed.ts';
import type { RegistryContext } from './registry-context.ts';

/** Revocations per feed answer: a platform further behind asks again from the last `seq` it got. */
export const FEED_PAGE = 1000;

/** `GET /revocations?since=N`: the revocations after `since`, signed, with the log's tip as `latest_seq`. */
export async function revocationFeed(ctx: RegistryContext, since: number): Promise<RevocationFeed> {
  const tip = await ctx.records.revocations.tip();
  const entries = await ctx.records.revocations.scan(since + 1, FEED_PAGE);
  const revocations: Revocation[] = entries.map((e) => ({
    seq: e.seq,
    name: e.name,
    version: e.version,
    reason: e.reason,
    revoked_at: e.revoked_at,
  }));
  return {
    feed: await signRevocationFeed(
      ctx.signer,
      { since, latest_seq: tip?.seq ?? 0, revocations },
      ctx.clock.now(),
    ),
  };
}

/**
 * Puts a security yank on the feed and pushes the feed from it on. `fresh` is true when this call
 * made the security yank; otherwise the revocation is appended only when it is missing (a crash
 * after the yank was stored and before its revocation was), so repeating a security yank repairs
 * the feed instead of doubling it.
 */
export async function recordRevocation(
  ctx: RegistryContext,
  revocation: RevocationRecord,
  fresh: boolean,
): Promise<void> {
  if (!fresh) {
    const known = await ctx.records.revocations.list({
      where: { name: revocation.name, version: revocation.version },
      limit: 1,
    });
    if (known.length > 0) return;
  }
  const entry = await ctx.records.revocations.append(() => revocation);
  try {
    await ctx.bus.notify(Subjects.registryRevocations, await revocationFeed(ctx, entry.seq - 1));
  } catch (err) {
    // Platforms that missed the push find the revocation on their next poll of GET /revocations.
    ctx.logger.warn(
      { err, name: revocation.name, version: revocation.version, seq: entry.seq },
      'could not push the revocation feed on the bus',
    );
  }
}

/** The security yanks of one package, oldest first (the package page marks each version revoked). */
export async function packageRevocations(ctx: RegistryContext, name: string): Promise<Revocation[]> {
  const entries = await ctx.records.revocations.list({ where: { name }, order: 'asc' });
  return entries.map((e) => ({ seq: e.seq, name: e.name, version: e.version, reason: e.reason, revoked_at: e.revoked_at }));
}
