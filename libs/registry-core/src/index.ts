export * from './signing/registry-signing.ts';
export * from './archive-store/archive-store.ts';
export { openFsArchiveStore } from './archive-store/fs-archive-store.ts';
export {
  DEFAULT_S3_REQUEST_TIMEOUT_MS,
  openS3ArchiveStore,
  type RegistryS3Settings,
  type S3ArchiveStoreOptions,
} from './archive-store/s3-archive-store.ts';
export { defaultArchiveDir, openArchiveStore } from './archive-store/open-archive-store.ts';
export * from './registry-records.ts';
export * from './revocations/revocation-feed.ts';
export { createPackageRegistry, type PackageRegistry } from './packages/package-registry.ts';
export type { PackageReadme } from './packages/package-readme.ts';
export type { PackageRegistryDeps, RegistryActor } from './packages/registry-context.ts';
export { RegistryError, RegistryErrors } from './packages/registry-error.ts';
export {
  legacyIdentityRule,
  migrateLegacyIdentities,
  type IdentityMigrationReport,
} from './packages/identity-migration.ts';
export { latestOf, sortHighestFirst } from './packages/package-views.ts';
export * from './auth/registry-keys.ts';
export * from './auth/registry-tokens.ts';
export * from './auth/issuer-store.ts';
export * from './auth/issuer-validators.ts';
export * from './auth/registry-identity.ts';
export * from './teams/index.ts';
export * from './trusted-publishing/index.ts';
export * from './search/index.ts';
export { BUILT_IN_TAXONOMY, createTaxonomy, unknownCategories } from './taxonomy/taxonomy.ts';
export { INSURANCE_TAXONOMY } from './taxonomy/insurance-taxonomy.ts';
export { regionList } from './taxonomy/region-list.ts';
export * from './collections/index.ts';
export * from './client/http-registry-client.ts';
export { RegistryRequestError } from './client/registry-request-error.ts';
export * from './client/registry-trust.ts';
