export * from './service.ts';
export * from './compose.ts';
export { fireHandler, fireKey, isRetryableFire, type FireHandlerDeps, type FireRetry } from './handlers/fire-handler.ts';
