import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * DECISIONS D9: a URL that arrives through the API or a package (an integration's MCP url, a
 * REST adapter's base_url) must not reach loopback, private, link-local or unique-local
 * addresses unless `[network] allow_private_targets = true`. The check is made on the addresses
 * the connection actually uses: `guardedLookup` is the socket's DNS lookup, so a name that
 * resolves (or re-resolves, DNS rebinding) to a private address is refused, and every redirect
 * is a new connection that goes through it again. IP literals skip DNS and are checked first.
 */
const PRIVATE = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local (cloud metadata lives here)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const)
  PRIVATE.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible ::a.b.c.d

  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const)
  PRIVATE.addSubnet(net, prefix, 'ipv6');

/** True for an address D9 calls private (an IPv4-mapped or NAT64 IPv6 address is judged by its IPv4 part). */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return PRIVATE.check(address, 'ipv4');
  if (family !== 6) return false;
  const embedded = embeddedIPv4(address);
  if (embedded !== undefined) return PRIVATE.check(embedded, 'ipv4');
  return PRIVATE.check(address, 'ipv6');
}

/**
 * The IPv4 address inside an IPv4-mapped (`::ffff:`) or NAT64 (`64:ff9b::`) IPv6 address, in
 * either spelling: dotted (`::ffff:127.0.0.1`) or hex, which is how the URL parser normalizes it
 * (`http://[::ffff:127.0.0.1]/` has the host `[::ffff:7f00:1]`).
 */
function embeddedIPv4(address: string): string | undefined {
  const match = /^(?:::ffff:|64:ff9b::)(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(address);
  if (match === null) return undefined;
  if (match[1] !== undefined) return match[1];
  const high = parseInt(match[2] ?? '0', 16);
  const low = parseInt(match[3] ?? '0', 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** The error a refused target gets: says which rule and how to lift it. */
export class PrivateTargetError extends Error {
  readonly code = 'EPRIVATETARGET';
  constructor(host: string, address: string) {
    super(
      `${host} resolves to the private address ${address}; outbound requests to API- or package-supplied URLs on private networks are refused unless [network] allow_private_targets = true (DECISIONS D9)`,
    );
    this.name = 'PrivateTargetError';
  }
}

/** Throws PrivateTargetError when `url`'s host is a private IP literal (names are checked at lookup). */
export function checkUrlTarget(url: URL, allowPrivate: boolean): void {
  if (allowPrivate) return;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0 && isPrivateAddress(host)) throw new PrivateTargetError(url.hostname, host);
  const name = host.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost'))
    throw new PrivateTargetError(url.hostname, '127.0.0.1');
}

/** A socket `lookup` that refuses private addresses (unless allowed), for node:http(s) requests. */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      const refused = allowPrivate ? undefined : addresses.find((a) => isPrivateAddress(a.address));
      if (refused !== undefined)
        return callback(Object.assign(new PrivateTargetError(hostname, refused.address)), '', 0);
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const first = addresses[0];
      if (first === undefined)
        return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
      callback(null, first.address, first.family);
    });
  };
}
