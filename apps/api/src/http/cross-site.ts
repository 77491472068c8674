import { isIP } from 'node:net';
import { isLoopbackHost } from '@agent-platform/config';
import type { PlatformConfig } from '@agent-platform/contracts';
import { Errors } from '@agent-platform/domain';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { ConfigHolder } from '../deps.ts';

/**
 * With `[auth] mode = "disabled"` every caller is an admin, so the only thing between a web page
 * the operator happens to open and the daemon on loopback is the browser (issue "Hardening" 6,
 * docs/http.md "Cross-site requests"). Refused with 403 PermissionDenied:
 * - a `Host` that is not a loopback name, an IP address or one of `[server] allowed_hosts`: a
 *   page served from attacker.example whose name was rebound to 127.0.0.1 (DNS rebinding) still
 *   says `Host: attacker.example`, while an IP literal cannot be rebound;
 * - an `Origin` that is neither the request's own (scheme and Host) nor in `[server.cors]
 *   allowed_origins` (a cross-site fetch or form);
 * - with no `Origin`, a `Sec-Fetch-Site` of `cross-site` or `same-site` (another port of
 *   localhost is same-site), e.g. an image or script tag.
 * A unix-socket listener is not checked: browsers cannot reach it. Modes `local` and `oidc` are
 * not checked either: a browser cannot attach the bearer token to a cross-site request without a
 * CORS preflight, which only `allowed_origins` pass.
 */
export function crossSiteHook(config: ConfigHolder, tls: boolean) {
  // A callback hook, not an async one: it runs on every request and has nothing to wait for.
  return function crossSite(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
    const current = config.current();
    if (current.auth.mode !== 'disabled' || request.socket.remoteAddress === undefined) {
      done();
      return;
    }
    done(refusal(request, current, tls));
  };
}

/** Why the request is refused, or undefined when it may go on. */
function refusal(request: FastifyRequest, current: PlatformConfig, tls: boolean): Error | undefined {
  const host = request.headers.host;
  if (host !== undefined && !hostAllowed(hostName(host), current.server.allowed_hosts)) {
    return refused(`the Host '${truncate(host)}' is not a loopback name, an IP address or one of [server] allowed_hosts`, { host: truncate(host) });
  }
  const origin = request.headers.origin;
  if (origin !== undefined) {
    if (origin === `${tls ? 'https' : 'http'}://${host ?? ''}` || originAllowed(origin, current)) return undefined;
    return refused(`the Origin '${truncate(origin)}' is another site`, { origin: truncate(origin) });
  }
  const site = request.headers['sec-fetch-site'];
  if (site === 'cross-site' || site === 'same-site') return refused(`the browser marked it Sec-Fetch-Site: ${site}`, { sec_fetch_site: site });
  return undefined;
}

function refused(why: string, details: Record<string, unknown>): Error {
  return Errors.permissionDenied(
    `cross-site request refused: ${why}. With [auth] mode = "disabled" only same-origin requests to a loopback or allowed host are served; ` +
      'set [auth] mode = "local", or list the host in [server] allowed_hosts or the origin in [server.cors] allowed_origins',
    details,
  );
}

/** The host part of a Host header: `[::1]:4200` -> `::1`, `Example.com:80` -> `example.com`. */
function hostName(header: string): string {
  const h = header.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(1, h.indexOf(']') > 0 ? h.indexOf(']') : undefined);
  const colon = h.lastIndexOf(':');
  return colon > 0 && h.indexOf(':') === colon ? h.slice(0, colon) : h;
}

function hostAllowed(name: string, allowed: readonly string[]): boolean {
  if (isLoopbackHost(name) || name.endsWith('.localhost') || isIP(name) !== 0) return true;
  return allowed.some((entry) => entry.toLowerCase() === name);
}

function originAllowed(origin: string, config: PlatformConfig): boolean {
  const cors = config.server.cors?.allowed_origins ?? [];
  return cors.includes('*') || cors.includes(origin);
}

function truncate(text: string, max = 100): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
