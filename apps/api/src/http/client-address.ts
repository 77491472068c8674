import { BlockList, isIPv4, isIPv6 } from 'node:net';

/** An address as BlockList wants it: IPv4-mapped IPv6 (`::ffff:10.0.0.1`) becomes plain IPv4. */
export function normalizeAddress(address: string): { address: string; family: 'ipv4' | 'ipv6' } | null {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1] !== undefined) return { address: mapped[1], family: 'ipv4' };
  if (isIPv4(address)) return { address, family: 'ipv4' };
  if (isIPv6(address)) return { address, family: 'ipv6' };
  return null;
}

/**
 * Builds the `allowed_ips` list: single addresses and CIDRs, IPv4 and IPv6. An IPv4-mapped IPv6
 * CIDR (`::ffff:10.0.0.0/104`) is folded to its IPv4 form so both spellings of a client match.
 * Entries were validated at config load; one that still does not parse matches nothing.
 */
export function buildAllowList(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [host = '', prefixText] = entry.trim().split('/');
    const parsed = normalizeAddress(host);
    if (parsed === null) continue;
    if (prefixText === undefined) {
      list.addAddress(parsed.address, parsed.family);
      continue;
    }
    let prefix = Number(prefixText);
    if (parsed.family === 'ipv4' && host.includes(':')) prefix -= 96;
    const max = parsed.family === 'ipv4' ? 32 : 128;
    if (Number.isInteger(prefix) && prefix >= 0 && prefix <= max) list.addSubnet(parsed.address, prefix, parsed.family);
  }
  return list;
}

/** `[server] trusted_proxies`, parsed: addresses and CIDRs, and whether unix-socket peers are trusted. */
export interface TrustedProxies {
  readonly list: BlockList;
  readonly unix: boolean;
  readonly none: boolean;
}

export function buildTrustedProxies(entries: readonly string[]): TrustedProxies {
  return { list: buildAllowList(entries.filter((e) => e !== 'unix')), unix: entries.includes('unix'), none: entries.length === 0 };
}

/** What unix-socket clients are called when no trusted proxy names them (they share one bucket). */
export const UNIX_SOCKET_CLIENT = 'unix-socket';

function isTrusted(address: string, trusted: TrustedProxies): boolean {
  const parsed = normalizeAddress(address);
  return parsed !== null && trusted.list.check(parsed.address, parsed.family);
}

/**
 * The client of a request (docs/permissions.md "Client address"): the connection's peer, unless
 * the peer is a trusted proxy; then the right-most `X-Forwarded-For` entry that is not itself a
 * trusted proxy. Entries further left were written by whoever sent them and are never believed.
 * A malformed entry stops the walk at the hop that reported it. `peer` is undefined on a unix socket.
 */
export function resolveClientAddress(peer: string | undefined, forwardedFor: string | string[] | undefined, trusted: TrustedProxies): string {
  // Node reports IPv4 clients of a dual-stack listener as `::ffff:a.b.c.d`: the plain form is the client.
  const direct = peer === undefined ? UNIX_SOCKET_CLIENT : /^::ffff:/i.test(peer) ? (normalizeAddress(peer)?.address ?? peer) : peer;
  if (trusted.none || forwardedFor === undefined) return direct;
  const peerTrusted = peer === undefined ? trusted.unix : isTrusted(peer, trusted);
  if (!peerTrusted) return direct;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor)
    .split(',')
    .map((hop) => hop.trim())
    .filter((hop) => hop !== '');
  let client = direct;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = normalizeAddress(stripPort(hops[i]!));
    if (hop === null) break;
    client = hop.address;
    if (!trusted.list.check(hop.address, hop.family)) break;
  }
  return client;
}

/** `203.0.113.5:4711` and `[2001:db8::1]:4711` as some proxies write them: the address part. */
function stripPort(hop: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(hop);
  if (bracketed?.[1] !== undefined) return bracketed[1];
  const v4 = /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(hop);
  return v4?.[1] ?? hop;
}
