import type { PlatformConfig } from '@agent-platform/contracts';
import { isLocalListen, readListenAddress } from './listen-address.ts';

export type BootGateResult = { ok: true; warning?: string } | { ok: false; reason: string };

/**
 * Spec §Authentication rule 4: the api and mcp surfaces refuse to start with auth mode
 * `disabled` on a non-loopback bind, because every caller would be an anonymous admin. Loopback
 * (127.0.0.0/8, ::1, localhost) and unix sockets are local. `allow_insecure_no_auth` overrides
 * the refusal; the warning is meant to be logged on every boot.
 */
export function checkBootGate(config: PlatformConfig): BootGateResult {
  const { surfaces, auth, server } = config;
  if (!surfaces.api && !surfaces.mcp) return { ok: true };
  if (auth.mode !== 'disabled') return { ok: true };
  const address = readListenAddress(server.listen);
  if (typeof address === 'string') return { ok: false, reason: `server.listen: ${address}` };
  if (isLocalListen(address)) return { ok: true };
  if (auth.allow_insecure_no_auth) {
    return {
      ok: true,
      warning:
        `auth is disabled on the non-loopback address ${server.listen}: every caller who can reach it is an ` +
        'anonymous admin ([auth] allow_insecure_no_auth = true). Set [auth] mode = "local" to require API keys.',
    };
  }
  return {
    ok: false,
    reason:
      `refusing to start: [auth] mode = "disabled" on the non-loopback address ${server.listen} would make every ` +
      'caller who can reach it an anonymous admin. Listen on 127.0.0.1 (or a unix socket), set [auth] mode = "local", ' +
      'or set [auth] allow_insecure_no_auth = true to accept the risk.',
  };
}
