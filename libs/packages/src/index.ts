export { buildPackage, type BuildResult } from './build.ts';
export {
  createArchive,
  loadArchive,
  MAX_ARCHIVE_CONTENT_BYTES,
  MAX_ARCHIVE_ENTRIES,
  readArchive,
  validateArchive,
} from './archive.ts';
export {
  checkCollectionClosure,
  COLLECTION_FILE,
  validateCollection,
  type CollectionReport,
} from './collection.ts';
export { contentHash } from './content-hash.ts';
export { checkManifest, MANIFEST_FILE, type ManifestOptions, type ManifestResult } from './manifest.ts';
export { loadPackage, readPackageDir, readValidatedPackage, validatePackage } from './package-dir.ts';
export { PackageError } from './package-error.ts';
export { isPackageName, packageNameFaults } from './package-name.ts';
export {
  checkPayload,
  PAYLOAD_FILES,
  type PackagePayload,
  type PayloadFile,
} from './payloads/check-payload.ts';
export { DEFAULT_TIMEOUT_SECS, normalizeStep } from './payloads/normalize-step.ts';
export { PLATFORM_VERSION } from './platform-version.ts';
export { createProblemList, formatProblem, type FileProblems, type ProblemList } from './problems.ts';
export { ISO_REGION_CODES, normalizeRegion } from './regions.ts';
export { MAX_README_BYTES, README_FILE } from './readme-file.ts';
export { RULES, type RuleId } from './rules.ts';
export {
  compareSemVer,
  compareVersions,
  isConstraint,
  isVersion,
  maxSatisfying,
  parseConstraint,
  parseVersion,
  satisfies,
  type Constraint,
  type SemVer,
} from './semver.ts';
export { setContentHash } from './set-content-hash.ts';
export {
  loadedOrThrow,
  PAYLOAD_DIR,
  validatePackageFiles,
  type LoadedPackage,
  type PackageFiles,
  type ValidateOptions,
  type ValidationReport,
} from './validate-package-files.ts';
