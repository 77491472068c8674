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
