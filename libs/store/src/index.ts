export * from './store.ts';
export * from './store-snapshots.ts';
export * from './create-file-once.ts';
export * from './counting-store.ts';
