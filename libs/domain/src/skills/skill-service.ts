import type { SkillDetail, SkillInfo } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import { catalogCollections } from '../catalog/catalog-records.ts';
import type { CatalogService } from '../catalog/catalog-service.ts';
import { Errors } from '../errors/errors.ts';
import { findSkill } from './find-skill.ts';
import { skillDetail, skillInfo } from './skill-views.ts';

/** The skill routes (spec §Skills; docs/skills.md). */
export interface SkillService {
  /**
   * Installs the skill package at `path` through the catalog (so GET /catalog/installed lists
   * it, and its dependencies install first). A package of another type is a ValidationError.
   */
  install(path: string): Promise<{ id: string }>;
  /** Installed skills, by id; bundled skills are never listed (spec). */
  list(): Promise<SkillInfo[]>;
  /** An installed or bundled skill; NotFound otherwise. */
  get(id: string): Promise<SkillDetail>;
}

export interface SkillServiceDeps {
  store: Store;
  catalog: CatalogService;
  /** Whether this node has the Starlark interpreter (SkillDetail `requirements`). */
  starlarkAvailable: boolean;
}

export function createSkillService(deps: SkillServiceDeps): SkillService {
  const { skills } = catalogCollections(deps.store);
  return {
    async install(path) {
      const items = await deps.catalog.install({ path, type: 'skill' });
      const skill = items.at(-1);
      if (skill === undefined) throw Errors.internal(`installing ${path} installed nothing`);
      return { id: skill.id };
    },
    async list() {
      const rows = await skills.find({ orderBy: { field: 'id' } });
      return rows.map(({ doc }) => skillInfo(doc, false));
    },
    async get(id) {
      const found = await findSkill(deps.store, id);
      if (found === null) throw Errors.notFound('skill', id);
      return skillDetail(found.skill, found.bundled, deps.starlarkAvailable);
    },
  };
}
