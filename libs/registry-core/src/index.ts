export * from './signing/registry-signing.ts';
export * from './archive-store/archive-store.ts';
export { openFsArchiveStore } from './archive-store/fs-archive-store.ts';
export * from './registry-records.ts';
export * from './revocations/revocation-feed.ts';
export * from './client/http-registry-client.ts';
export { RegistryRequestError } from './client/registry-request-error.ts';
export * from './client/registry-trust.ts';
