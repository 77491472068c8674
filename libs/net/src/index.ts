export { isPrivateAddress, checkUrlTarget, guardedLookup, PrivateTargetError } from './private-target.ts';
export { guardedFetch, type FetchLike } from './guarded-fetch.ts';
export * from './standard-webhooks.ts';
export { sendGuarded, guardedPoster, type GuardedRequest, type GuardedRequestOptions, type GuardedResponse } from './guarded-request.ts';
export { readCappedBody } from './read-capped-body.ts';
