export { MongoStore, openMongoStore } from './mongo-store.ts';
export type { MongoStoreOptions } from './mongo-store.ts';
