import type { RegistryPackage, RegistryTokenScope } from '@agent-platform/contracts';
import type { RegistryHistoryRecord, RegistryPackageRecord } from '../registry-records.ts';
import { loadPackage } from './package-reads.ts';
import { packageView } from './package-views.ts';
import { afterChange, assertMayChange, type RegistryActor, type RegistryContext } from './registry-context.ts';
import { RegistryErrors } from './registry-error.ts';
import { withTeamsOf } from '../teams/team-membership.ts';

/** What one owner's change of a package record needs to say. */
export interface PackageChange {
  /** For refusals: `change the owners of 'x'`. */
  action: string;
  /** The token scope it takes (registry-context.ts `assertTokenAllows`). */
  scope: RegistryTokenScope;
  /** Checks needing the stored package before anything is written (a refusal throws); optional. */
  check?: (pkg: RegistryPackageRecord) => Promise<void>;
  /** The new record from the current one; may throw a refusal, which writes nothing. */
  apply: (current: RegistryPackageRecord, now: string) => RegistryPackageRecord;
  /** Its history line, beside name, time and identity; a function of the record before and after the change when it depends on them. */
  line: ChangeLine | ((before: RegistryPackageRecord, after: RegistryPackageRecord) => ChangeLine);
}

type ChangeLine = Pick<RegistryHistoryRecord, 'action' | 'version' | 'reason'> & Pick<Partial<RegistryHistoryRecord>, 'owners' | 'tag'>;

/**
 * An owner's (a registry admin's, a token's within its scope) change of a package record: owners,
 * deprecation, dist-tags. The caller is checked on the stored package, then again on the current
 * document under the write (a concurrent transfer may have removed it); the change is stored,
 * announced in the history (afterChange), and the package view answered. Versions are not changed
 * by any of these, so the ones read first make the view.
 */
export async function changePackage(ctx: RegistryContext, name: string, caller: RegistryActor, change: PackageChange): Promise<RegistryPackage> {
  const { pkg, versions } = await loadPackage(ctx, name);
  // Members of a team among the owners act as owners: their membership is read now (no cache).
  const actor = await withTeamsOf(ctx.store, caller, pkg.owners);
  assertMayChange(pkg, actor, change.action, change.scope);
  await change.check?.(pkg);
  const now = ctx.clock.now().toISOString();
  const updated = await ctx.records.packages.update(name, (current) => {
    if (current === null) throw RegistryErrors.notFound('package', name);
    assertMayChange(current.doc, actor, change.action, change.scope);
    return change.apply(current.doc, now);
  });
  const after = updated?.doc ?? pkg;
  const line = typeof change.line === 'function' ? change.line(pkg, after) : change.line;
  await afterChange(ctx, { name, at: now, identity: actor.identity, security: false, ...line });
  return packageView(after, versions);
}
