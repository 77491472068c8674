import { Type, type Static } from 'typebox';
import { PackageType } from '../packages.ts';

/** HTTP bodies of the catalog and template routes (DECISIONS D5; docs/catalog.md). */

export const CatalogInstallBody = Type.Object(
  {
    path: Type.Optional(
      Type.String({ minLength: 1, description: 'Absolute path of a local package directory.' }),
    ),
    name: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'A registry package name (needs the registry: not available yet).',
      }),
    ),
    version: Type.Optional(
      Type.String({ minLength: 1, description: 'Semver constraint for `name`; default `*`.' }),
    ),
    activate: Type.Optional(
      Type.Boolean({ description: 'Leave the agents this install creates or upgrades Running.' }),
    ),
  },
  { additionalProperties: false },
);
export type CatalogInstallBody = Static<typeof CatalogInstallBody>;

/** One package an install touched; `id` is the agent or workflow UUID, else the package name. */
export const InstalledItem = Type.Object({
  type: PackageType,
  name: Type.String(),
  version: Type.String(),
  id: Type.String(),
  status: Type.Union([Type.Literal('installed'), Type.Literal('upgraded'), Type.Literal('unchanged')]),
});
export type InstalledItem = Static<typeof InstalledItem>;

export const CatalogInstallResult = Type.Object({
  installed: Type.Array(InstalledItem, { description: 'Dependencies first, the requested package last.' }),
});
export type CatalogInstallResult = Static<typeof CatalogInstallResult>;

export const InstalledPackage = Type.Object({
  name: Type.String(),
  type: PackageType,
  version: Type.String(),
  title: Type.String(),
  installed_at: Type.String({ description: 'ISO 8601 UTC; kept across upgrades.' }),
});
export type InstalledPackage = Static<typeof InstalledPackage>;

export const InstalledPackageList = Type.Object({ packages: Type.Array(InstalledPackage) });
export type InstalledPackageList = Static<typeof InstalledPackageList>;

export const PackageNameParams = Type.Object({ name: Type.String({ description: 'Package name.' }) });
export type PackageNameParams = Static<typeof PackageNameParams>;

export const CatalogSearchQuery = Type.Object({ q: Type.Optional(Type.String()) });
export type CatalogSearchQuery = Static<typeof CatalogSearchQuery>;

/** An installed agent-template package (GET /templates). */
export const TemplateSummary = Type.Object({
  name: Type.String(),
  title: Type.String(),
  version: Type.String(),
  description: Type.String(),
  competencies: Type.Array(Type.String(), { description: 'AGENT.md competencies, in equip order.' }),
});
export type TemplateSummary = Static<typeof TemplateSummary>;

export const TemplateList = Type.Object({ templates: Type.Array(TemplateSummary) });
export type TemplateList = Static<typeof TemplateList>;
