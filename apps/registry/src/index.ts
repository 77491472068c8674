export * from './registry-app.ts';
export * from './service.ts';
export * from './compose.ts';
export { installRegistryAuth, REGISTRY_BOOTSTRAP_CALLER } from './auth/install-registry-auth.ts';
export * from './auth/registry-access.ts';
export * from './auth/registry-auth-services.ts';
export { registryAuthRoutes } from './routes/registry-auth-routes.ts';
export type { RegistryRouteDeps, RegistryRoutePlugin } from './routes/registry-route.ts';
