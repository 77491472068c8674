import type { PlatformConfig } from '@agent-platform/contracts';
import { isLocalListen, readListenAddress } from './listen-address.ts';

export type BootGateResult = { ok: true; warning?: string } | { ok: false; reason: string };

/**
 * Spec §Authentication rule 4: the api and mcp surfaces refuse to start with auth mode
 * `disabled` on a non-loopback bind, because every caller would be an anonymous admin. Loopback
 * (127.0.0.0/8, ::1, localhost) and unix sockets are local. `allow_insecure_no_auth` overrides
 * the refusal; the warning is meant to be logged on every boot.
 *
 * The dashboard is covered too, although the rule names only api and mcp: it is served on the
 * api listener and drives the api's routes, so with auth disabled it would hand every visitor an
 * admin console in a browser (docs/dashboard.md "Auth disabled").
 */
export function checkBootGate(config: PlatformConfig): BootGateResult {
  const { surfaces, auth, server } = config;
  if (!surfaces.api && !surfaces.mcp && !surfaces.dashboard) return { ok: true };
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

/**
 * The boot gate for a reload (issue "Hardening" 4): the listener and the surfaces are those of
 * the running process (both need a restart to change), the auth settings are the candidate's.
 * Returns the reasons to refuse the candidate, or an empty list.
 */
export function bootGateForReload(running: Pick<PlatformConfig, 'server' | 'surfaces'>, candidate: PlatformConfig): string[] {
  const gate = checkBootGate({ ...candidate, surfaces: running.surfaces, server: { ...candidate.server, listen: running.server.listen } });
  return gate.ok ? [] : [gate.reason.replace('refusing to start', 'refusing this reload')];
}
