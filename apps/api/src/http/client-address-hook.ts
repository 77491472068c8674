import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { ConfigHolder } from '../deps.ts';
import { buildTrustedProxies, resolveClientAddress, type TrustedProxies } from './client-address.ts';

/**
 * Sets `request.clientAddress` once per request, for the allowlist, the authentication lockout
 * and the audit: the peer, or the client a trusted proxy names (`[server] trusted_proxies`,
 * read per request so a reload applies; the parsed form is cached per config object). A
 * callback hook, not an async one: it runs on every request and has nothing to wait for.
 */
export function clientAddressHook(config: ConfigHolder) {
  const cache = new WeakMap<readonly string[], TrustedProxies>();
  return function clientAddress(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
    const entries = config.current().server.trusted_proxies;
    let trusted = cache.get(entries);
    if (trusted === undefined) {
      trusted = buildTrustedProxies(entries);
      cache.set(entries, trusted);
    }
    request.clientAddress = resolveClientAddress(request.socket.remoteAddress, request.headers['x-forwarded-for'], trusted);
    done();
  };
}
