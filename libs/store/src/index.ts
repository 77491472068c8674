export * from './store.ts';
