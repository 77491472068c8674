export { openExampleArchives, renamed, repack, type ExampleArchives } from './example-archives.ts';
export { registryCall, type RegistryAnswer, type RegistryCallOptions } from './registry-call.ts';
export { seedRecord, seedVersions, seedYank, type SeedVersion } from './seed-registry.ts';
export * from '../client/testing/index.ts';
