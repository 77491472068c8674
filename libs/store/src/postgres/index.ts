export { PostgresStore, openPostgresStore, DEFAULT_POOL_SIZE, DEFAULT_STATEMENT_TIMEOUT_MS } from './postgres-store.ts';
export type { PostgresStoreOptions } from './postgres-store.ts';
export { PostgresStoreError } from './pg-handle.ts';
export { SCHEMA_VERSION } from './pg-migrations.ts';
export { redactPostgresUrl } from './pg-url.ts';
export { SNAPSHOT_BATCH_ROWS } from './pg-snapshots.ts';
