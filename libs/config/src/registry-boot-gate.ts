import type { PlatformConfig } from '@agent-platform/contracts';
import type { BootGateResult } from './boot-gate.ts';
import { isLocalListen, readListenAddress } from './listen-address.ts';

/**
 * The registry's boot gate (spec §Registry surface: "`disabled` is refused at boot on a
 * network-reachable bind"), mirroring `checkBootGate` for the api: with `[registry.auth] mode =
 * "disabled"` every caller is an anonymous registry admin (publish, yank, keys, issuers), so the
 * registry listener may then only be local (loopback or a unix socket), unless
 * `[registry.auth] allow_insecure_no_auth` accepts the risk (a warning to log on every boot).
 * Called by whatever serves the registry: apps/registry alone, and the all-in-one when
 * `[surfaces] registry = true`.
 */
export function checkRegistryBootGate(config: Pick<PlatformConfig, 'registry'>): BootGateResult {
  const { listen, auth } = config.registry;
  if (auth.mode !== 'disabled') return { ok: true };
  const address = readListenAddress(listen);
  if (typeof address === 'string') return { ok: false, reason: `registry.listen: ${address}` };
  if (isLocalListen(address)) return { ok: true };
  if (auth.allow_insecure_no_auth) {
    return {
      ok: true,
      warning:
        `registry auth is disabled on the non-loopback address ${listen}: every caller who can reach it is an anonymous ` +
        'registry admin who may publish, yank and manage keys ([registry.auth] allow_insecure_no_auth = true). ' +
        'Set [registry.auth] mode = "local" to require registry keys.',
    };
  }
  return {
    ok: false,
    reason:
      `refusing to start the registry: [registry.auth] mode = "disabled" on the non-loopback address ${listen} would make ` +
      'every caller who can reach it an anonymous registry admin. Listen on 127.0.0.1 (or a unix socket), set ' +
      '[registry.auth] mode = "local" or "oidc", or set [registry.auth] allow_insecure_no_auth = true to accept the risk.',
  };
}
