export * from './store.ts';
export * from './store-snapshots.ts';
