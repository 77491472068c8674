import type { RoutePlugin } from '../api-app.ts';

/**
 * Every route group of the api surface, in registration order. A new area adds its plugin here;
 * the shared hooks (auth, role check, content type, audit, ...) apply to all of them.
 */
export const routePlugins: RoutePlugin[] = [];
