import { Errors } from '@agent-platform/domain';
import type { FastifyRequest } from 'fastify';
import type { BlockList } from 'node:net';
import type { ConfigHolder } from '../deps.ts';
import { buildAllowList, normalizeAddress } from './client-address.ts';

/**
 * `[server] allowed_ips` (spec §Limits "Listener settings"): when non-empty, only listed addresses
 * and CIDRs are served; others get 403 `PermissionDenied` naming their address. The address is
 * the request's client (`clientAddressHook`: behind a trusted proxy, the client it names). The
 * list is read per request (reload applies); the parsed form is cached per config object.
 */
export function ipAllowlistHook(config: ConfigHolder) {
  const cache = new WeakMap<readonly string[], BlockList>();
  return async function ipAllowlist(request: FastifyRequest): Promise<void> {
    const entries = config.current().server.allowed_ips;
    if (entries.length === 0) return;
    // Unix-socket clients have no address; config refuses allowed_ips with a unix listen address.
    if (request.socket.remoteAddress === undefined) return;
    const remote = request.clientAddress;
    let list = cache.get(entries);
    if (list === undefined) {
      list = buildAllowList(entries);
      cache.set(entries, list);
    }
    const client = normalizeAddress(remote);
    if (client === null || !list.check(client.address, client.family)) {
      throw Errors.permissionDenied(`client address ${remote} is not in [server] allowed_ips`, { client_address: remote });
    }
  };
}
