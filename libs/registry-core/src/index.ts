export * from './signing/registry-signing.ts';
export * from './archive-store/archive-store.ts';
export { openFsArchiveStore } from './archive-store/fs-archive-store.ts';
export * from './registry-records.ts';
export * from './revocations/revocation-feed.ts';
export * from './auth/registry-keys.ts';
export * from './auth/issuer-store.ts';
export * from './auth/issuer-validators.ts';
