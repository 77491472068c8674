import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { isPrivateAddress, PrivateTargetError } from '@agent-platform/net';

/**
 * DECISIONS D9 for kinds that open sockets themselves (SMTP, MQTT): resolves `host` once, refuses
 * it when any of its addresses is private (unless `[network] allow_private_targets`), and returns
 * the checked address, which the caller connects to, so a second resolution (DNS rebinding)
 * cannot send the connection elsewhere. With private targets allowed the host is returned as is.
 */
export async function resolveGuardedHost(host: string, allowPrivate: boolean): Promise<string> {
  const bare = host.replace(/^\[|\]$/g, '');
  if (allowPrivate) return bare;
  if (isIP(bare) !== 0) {
    if (isPrivateAddress(bare)) throw new PrivateTargetError(host, bare);
    return bare;
  }
  const lower = bare.toLowerCase();
  if (lower === 'localhost' || lower.endsWith('.localhost')) throw new PrivateTargetError(host, '127.0.0.1');
  const addresses = await lookup(bare, { all: true });
  const refused = addresses.find((a) => isPrivateAddress(a.address));
  if (refused !== undefined) throw new PrivateTargetError(host, refused.address);
  const first = addresses[0];
  if (first === undefined) throw new Error(`${host} has no address`);
  return first.address;
}
