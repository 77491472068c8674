export { openExampleArchives, repack, type ExampleArchives } from './example-archives.ts';
export { seedRecord, seedVersions, seedYank, type SeedVersion } from './seed-registry.ts';
export * from '../client/testing/index.ts';
