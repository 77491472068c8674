export { checkCollection } from './collection-check.ts';
export type { CollectionCaller, CollectionFailure, CollectionOutcome } from './collection-outcome.ts';
export { createCollectionService, type CollectionService, type CollectionServiceDeps } from './collection-service.ts';
