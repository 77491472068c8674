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
        description: 'A package name, fetched with its dependencies from [catalog] registry_url.',
      }),
    ),
    collection: Type.Optional(
      Type.String({ minLength: 1, description: 'A registry collection name: every package of it, in one call.' }),
    ),
    version: Type.Optional(
      Type.String({ minLength: 1, description: 'Semver constraint for `name`, or one of its dist-tags (`latest`, `next`); default `*`.' }),
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
  deprecated: Type.Optional(
    Type.String({ description: "From the registry: the package's deprecation message (it installed all the same)." }),
  ),
});
export type InstalledItem = Static<typeof InstalledItem>;

export const CatalogInstallResult = Type.Object({
  installed: Type.Array(InstalledItem, { description: 'Dependencies first, the requested package last.' }),
});
export type CatalogInstallResult = Static<typeof CatalogInstallResult>;

/** A security yank that reached this platform (docs/catalog.md "Revocations"). */
export const PackageRevocation = Type.Object({
  version: Type.String({ description: 'The revoked version.' }),
  reason: Type.String(),
  revoked_at: Type.String({ description: 'When the registry yanked it, ISO 8601 UTC.' }),
  seq: Type.Integer({ description: 'Position on the registry revocation feed.' }),
  override: Type.Union([
    Type.Object({ reason: Type.String(), by: Type.String(), at: Type.String() }),
    Type.Null(),
  ], { description: 'An operator override: install and activation allowed again, with the recorded reason.' }),
});
export type PackageRevocation = Static<typeof PackageRevocation>;

export const InstalledPackage = Type.Object({
  name: Type.String(),
  type: PackageType,
  version: Type.String(),
  title: Type.String(),
  installed_at: Type.String({ description: 'ISO 8601 UTC; kept across upgrades.' }),
  source: Type.Optional(Type.Union([Type.Literal('path'), Type.Literal('registry')], { description: 'Where it was installed from.' })),
  revoked: Type.Optional(Type.Boolean({ description: 'The installed version was revoked by a security yank.' })),
  revocation: Type.Optional(Type.Union([PackageRevocation, Type.Null()])),
});
export type InstalledPackage = Static<typeof InstalledPackage>;

export const InstalledPackageList = Type.Object({ packages: Type.Array(InstalledPackage) });
export type InstalledPackageList = Static<typeof InstalledPackageList>;

export const PackageNameParams = Type.Object({ name: Type.String({ description: 'Package name.' }) });
export type PackageNameParams = Static<typeof PackageNameParams>;

export const CatalogSearchQuery = Type.Object({
  q: Type.Optional(Type.String()),
  type: Type.Optional(PackageType),
  category: Type.Optional(Type.String()),
  region: Type.Optional(Type.String()),
  keyword: Type.Optional(Type.String()),
  page: Type.Optional(Type.Integer({ minimum: 1 })),
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
});

/** `POST /catalog/installed/{name}/override-revocation` (ours): install and activate a revoked package again. */
export const RevocationOverrideBody = Type.Object(
  { reason: Type.String({ minLength: 1, maxLength: 500, description: 'Recorded in the audit trail and on the package.' }) },
  { additionalProperties: false },
);
export type RevocationOverrideBody = Static<typeof RevocationOverrideBody>;
/** The answer of the override route: every revocation recorded for that name, overrides included. */
export const RevocationOverrideResult = Type.Object({
  name: Type.String(),
  revocations: Type.Array(PackageRevocation, { description: 'Oldest feed position first.' }),
});
export type RevocationOverrideResult = Static<typeof RevocationOverrideResult>;
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
