export { EmbeddedStore, openEmbeddedStore, storeSnapshotsOf } from './embedded-store.ts';
export { StoreInUseError } from './sqlite-handle.ts';
export type { EmbeddedStoreOptions } from './embedded-store.ts';
export type { Durability } from './sqlite-handle.ts';
export { inspectSnapshot } from './sqlite-snapshots.ts';
