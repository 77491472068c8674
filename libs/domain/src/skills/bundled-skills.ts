import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadPackage } from '@agent-platform/packages';
import type { SkillRecord } from '../catalog/catalog-records.ts';
import { skillFromPackage } from '../catalog/package-entities.ts';

/** The skill packages shipped with the platform (bundled/README.md, docs/skills.md). */
export const BUNDLED_SKILLS_DIR = fileURLToPath(new URL('./bundled/', import.meta.url));

/** Bundled skills were never installed: their records carry this fixed time, not a boot time. */
const SHIPPED_AT = '1970-01-01T00:00:00.000Z';

let loaded: Promise<ReadonlyMap<string, SkillRecord>> | null = null;

/**
 * The bundled skills by id, read from their package directories once per process. A bundled
 * package that does not load is a defect of the build, so it throws rather than being skipped.
 */
export function bundledSkills(): Promise<ReadonlyMap<string, SkillRecord>> {
  loaded ??= loadBundled(BUNDLED_SKILLS_DIR);
  loaded.catch(() => (loaded = null));
  return loaded;
}

async function loadBundled(dir: string): Promise<ReadonlyMap<string, SkillRecord>> {
  const skills = new Map<string, SkillRecord>();
  const entries = await readdir(dir, { withFileTypes: true });
  for (const entry of entries.filter((e) => e.isDirectory()).sort((a, b) => a.name.localeCompare(b.name))) {
    const pkg = await loadPackage(join(dir, entry.name));
    if (pkg.payload.file !== 'SKILL.md') throw new Error(`bundled package ${entry.name} is not a skill`);
    skills.set(pkg.manifest.package.name, skillFromPackage(pkg.manifest.package, pkg.payload.data, null, SHIPPED_AT));
  }
  return skills;
}
