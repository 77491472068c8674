import cors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyRequest } from 'fastify';
import type { ApiApp } from '../api-app.ts';
import type { ConfigHolder } from '../deps.ts';

/** Headers a browser script may read on our responses. */
const EXPOSED = ['Api-Version', 'Retry-After', 'WWW-Authenticate', 'X-Request-Id'];

/**
 * `[server.cors]`, read per request (reload applies). Absent: no CORS headers at all. Registered
 * before every other hook so that a preflight (which carries no credential) is answered before
 * authentication, as browsers require.
 */
export async function installCors(app: ApiApp, config: ConfigHolder): Promise<void> {
  const delegator = (_request: FastifyRequest, callback: (error: Error | null, options: FastifyCorsOptions) => void): void => {
    const settings = config.current().server.cors;
    if (settings === undefined || settings.allowed_origins.length === 0) {
      callback(null, { origin: false });
      return;
    }
    const any = settings.allowed_origins.includes('*');
    callback(null, {
      // With credentials a literal "*" is refused by browsers, so the origin is echoed instead.
      origin: any ? (settings.allow_credentials ? true : '*') : settings.allowed_origins,
      credentials: settings.allow_credentials,
      maxAge: settings.max_age_secs,
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
      exposedHeaders: EXPOSED,
    });
  };
  await app.register(cors, { delegator });
}
