export type { ApiApp, RoutePlugin } from './api-app.ts';
export type { ApiDeps, ConfigHolder } from './deps.ts';
export type { RouteAccess } from './route-config.ts';
export { buildApi, type BuildApiOptions } from './build-api.ts';
export { composeApi, type ComposeApiOptions, type ComposedApi } from './compose.ts';
export { createApiService, type ApiService, type ApiServiceOptions } from './service.ts';
export { STATUS } from './http/error-status.ts';
export { installErrorHandling, toErrorReply } from './http/error-handler.ts';
// Shared with the registry surface (apps/registry): one content-type policy, validator, status override and OpenAPI generator.
export { installContentTypeParsers } from './http/content-type.ts';
export { validatorCompiler } from './http/validator-compiler.ts';
export { withHttpStatus } from './http/http-status.ts';
export { installOpenApiDocument, type OpenApiDocumentOptions } from './http/openapi.ts';
export { registeredRoutes, type RouteRecord } from './http/route-catalog.ts';
export { runMain, runProcess, type ProcessService, type RunProcessOptions } from './run-process.ts';
export { closeGracefully, listenOn } from './listener.ts';
export { createRevocationWatcher, type RevocationWatcher, type RevocationWatcherDeps } from './revocations/revocation-watcher.ts';
export { composeRevocationWatcher } from './revocations/compose-revocation-watcher.ts';
export { renderMcpToolReference } from './mcp/tool-reference.ts';
