import type { RegistryPackage } from '@agent-platform/contracts';
import { versionId } from '../registry-records.ts';
import { changePackage } from './package-change.ts';
import { assertVersion, type RegistryActor, type RegistryContext } from './registry-context.ts';
import { RegistryErrors } from './registry-error.ts';

/** A dist-tag: a lower-case word, as npm's (`next`, `beta`, `lts-2026`). */
const TAG = /^[a-z][a-z0-9-]{0,31}$/;
const MAX_TAGS = 20;

/**
 * `PUT` / `DELETE /packages/{name}/dist-tags/{tag}` (docs/registry.md "Dist-tags"), as npm's: an
 * owner (a registry admin, a token with `publish-update`) points a tag at a published, non-yanked
 * version, moves it, or removes it. `latest` is not set: it is always the highest listed version
 * (cargo's rule, as installs resolve it). A yank leaves a tag where it is (the view shows it).
 */
export async function setDistTag(ctx: RegistryContext, name: string, tag: string, version: string | null, actor: RegistryActor): Promise<RegistryPackage> {
  if (tag === 'latest') throw RegistryErrors.validation("the tag 'latest' is always the highest listed version: it cannot be set or removed", { tag });
  if (!TAG.test(tag)) throw RegistryErrors.validation(`invalid dist-tag '${tag.slice(0, 40)}': a lower-case letter, then up to 31 lower-case letters, digits or hyphens`, { tag: tag.slice(0, 40) });
  if (version !== null) assertVersion(version);
  return changePackage(ctx, name, actor, {
    action: version === null ? `remove the dist-tag '${tag}' of '${name}'` : `tag versions of '${name}'`,
    scope: 'publish-update',
    check: async () => {
      if (version === null) return;
      const target = await ctx.records.versions.get(versionId(name, version));
      if (target === null) throw RegistryErrors.notFound('version', versionId(name, version));
      if (target.doc.yanked) throw RegistryErrors.conflict(`${name} ${version} is yanked: a tag names a version to install`, { name, version });
    },
    apply: (current, now) => {
      const tags = { ...(current.dist_tags ?? {}) };
      if (version === null) {
        if (tags[tag] === undefined) throw RegistryErrors.notFound('dist-tag', `${name}@${tag}`);
        delete tags[tag];
      } else {
        if (tags[tag] === undefined && Object.keys(tags).length >= MAX_TAGS)
          throw RegistryErrors.validation(`package '${name}' has ${MAX_TAGS} dist-tags already: remove one first`, { name, tag });
        tags[tag] = version;
      }
      return { ...current, dist_tags: tags, updated_at: now };
    },
    line: { action: version === null ? 'untag' : 'tag', version, reason: null, tag },
  });
}
