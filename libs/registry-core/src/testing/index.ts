export { seedRecord, seedVersions, seedYank, type SeedVersion } from './seed-registry.ts';
