import { isIP, isIPv4 } from 'node:net';

/** A parsed `server.listen` / `registry.listen` value. */
export type ListenAddress = { kind: 'tcp'; host: string; port: number } | { kind: 'unix'; path: string };

const HOSTNAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/**
 * Parses `host:port` (IPv6 in brackets: `[::1]:4200`) or `unix:<path>`. Returns the reason as a
 * string when the text is not a listen address, so validation can name the key.
 */
export function readListenAddress(text: string): ListenAddress | string {
  if (text.startsWith('unix:')) {
    const path = text.slice('unix:'.length);
    return path.length === 0 ? 'unix: needs a socket path, e.g. "unix:/run/agent-platform.sock"' : { kind: 'unix', path };
  }
  const colon = text.lastIndexOf(':');
  if (colon < 0) return `must be host:port or unix:/path (got "${text}")`;
  const rawHost = text.slice(0, colon);
  const rawPort = text.slice(colon + 1);
  if (!/^\d{1,5}$/.test(rawPort) || Number(rawPort) > 65535) {
    return `port must be an integer from 0 to 65535 (got "${rawPort}")`;
  }
  const host = rawHost.startsWith('[') && rawHost.endsWith(']') ? rawHost.slice(1, -1) : rawHost;
  if (host.length === 0) return 'host is missing; use 127.0.0.1 for this machine only or 0.0.0.0 for every interface';
  const bracketed = host !== rawHost;
  if (bracketed ? isIP(host) !== 6 : !(isIPv4(host) || HOSTNAME.test(host))) {
    return bracketed ? `"${host}" is not an IPv6 address` : `"${rawHost}" is not an IPv4 address, [IPv6] address or hostname`;
  }
  return { kind: 'tcp', host, port: Number(rawPort) };
}

/** Parses a listen address already accepted by validation; throws on text that never was. */
export function parseListenAddress(text: string): ListenAddress {
  const parsed = readListenAddress(text);
  if (typeof parsed === 'string') throw new Error(`invalid listen address "${text}": ${parsed}`);
  return parsed;
}

/** True for localhost, 127.0.0.0/8 and ::1 (also in its IPv4-mapped form). */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  const v4 = h.startsWith('::ffff:') ? h.slice('::ffff:'.length) : h;
  return isIPv4(v4) && v4.startsWith('127.');
}

/** True for a local bind: a unix socket or a loopback host. */
export function isLocalListen(address: ListenAddress): boolean {
  return address.kind === 'unix' || isLoopbackHost(address.host);
}

/** True for a DNS host name (`api.example.com`, `localhost`), without a port. */
export function isHostName(text: string): boolean {
  return HOSTNAME.test(text);
}

/** True for an IPv4/IPv6 address or a CIDR block of either (`10.0.0.0/8`, `fd00::/8`). */
export function isIpOrCidr(text: string): boolean {
  const slash = text.indexOf('/');
  const ip = slash < 0 ? text : text.slice(0, slash);
  const family = isIP(ip);
  if (family === 0) return false;
  if (slash < 0) return true;
  const prefix = text.slice(slash + 1);
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}
