import type { RegistryVersion, RegistryYankBody } from '@agent-platform/contracts';
import { versionId, type RegistryVersionRecord } from '../registry-records.ts';
import { versionView } from './package-views.ts';
import {
  afterChange,
  assertMayChange,
  assertName,
  assertVersion,
  type RegistryActor,
  type RegistryContext,
} from './registry-context.ts';
import { RegistryErrors } from './registry-error.ts';
import { recordRevocation } from './revocation-log.ts';
import { withTeamsOf } from '../teams/team-membership.ts';

/**
 * `POST /packages/{name}/{version}/yank` (docs/registry.md "Yank"): cargo and PEP 592 semantics.
 * A yanked version leaves `latest` and new resolution but stays downloadable by exact version.
 * Idempotent: yanking a yanked version (or un-yanking a live one) changes and records nothing,
 * except that a plain yank may be raised to a security yank. A security yank appends a
 * revocation and pushes the signed feed; un-yanking never un-revokes (platforms keep refusing
 * until their operator overrides).
 */
export async function yankVersion(
  ctx: RegistryContext,
  name: string,
  version: string,
  body: RegistryYankBody,
  actor: RegistryActor,
): Promise<RegistryVersion> {
  assertName(name);
  assertVersion(version);
  const yanked = body.yanked ?? true;
  const security = body.security ?? false;
  if (!yanked && security)
    throw RegistryErrors.validation(
      'security applies to a yank; an un-yank (yanked: false) cannot be a security yank',
      { security, yanked },
    );
  const pkg = await ctx.records.packages.get(name);
  if (pkg === null) throw RegistryErrors.notFound('package', name);
  assertMayChange(pkg.doc, await withTeamsOf(ctx.store, actor, pkg.doc.owners), `${yanked ? 'yank' : 'un-yank'} versions of '${name}'`, 'yank');
  const id = versionId(name, version);
  const now = ctx.clock.now().toISOString();

  // `change` may run more than once; the last run is the one stored, so `changed` ends up true
  // exactly when this call made the transition (a concurrent identical yank sees it done).
  let changed = false;
  const updated = await ctx.records.versions.update(id, (current) => {
    changed = false;
    if (current === null) return null;
    const next = transition(current.doc, {
      yanked,
      security,
      reason: body.reason,
      identity: actor.identity,
      now,
    });
    changed = next !== null;
    return next;
  });
  if (updated === null) throw RegistryErrors.notFound('version', id);
  const record = updated.doc;
  if (changed) {
    await afterChange(ctx, {
      name,
      at: now,
      action: yanked ? 'yank' : 'unyank',
      version,
      identity: actor.identity,
      reason: body.reason,
      security,
    });
  }
  if (record.yank?.security === true)
    await recordRevocation(
      ctx,
      { name, version, reason: record.yank.reason, revoked_at: record.yank.yanked_at },
      changed,
    );
  return versionView(record);
}

function transition(
  doc: RegistryVersionRecord,
  change: { yanked: boolean; security: boolean; reason: string; identity: string; now: string },
): RegistryVersionRecord | null {
  if (!change.yanked) return doc.yanked ? { ...doc, yanked: false, yank: null } : null;
  if (doc.yank !== null && (doc.yank.security || !change.security)) return null;
  return {
    ...doc,
    yanked: true,
    yank: {
      reason: change.reason,
      security: change.security,
      yanked_at: change.now,
      yanked_by: change.identity,
    },
  };
}
