export { EmbeddedStore, openEmbeddedStore } from './embedded-store.ts';
export type { EmbeddedStoreOptions } from './embedded-store.ts';
export type { Durability } from './sqlite-handle.ts';
