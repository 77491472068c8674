/**
 * Whether a URL may be an OIDC issuer, discovery or JWKS endpoint: `https:`, or `http:` only on
 * a loopback host (127.0.0.0/8, ::1, localhost), for a provider on the same machine (development,
 * tests). Plain http elsewhere would let anyone on the path swap the keys. Returns the reason it
 * may not, or null when it may.
 */
export function endpointUrlProblem(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'is not a URL';
  }
  if (url.username !== '' || url.password !== '') return 'must not carry credentials';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:') return isLoopbackUrlHost(url.hostname) ? null : 'must be https (http only on a loopback host)';
  return 'must be an https URL';
}

/** 127.0.0.0/8, ::1 (as URL.hostname spells it, `[::1]`) or localhost. */
export function isLoopbackUrlHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  if (host === 'localhost' || host === '[::1]' || host === '::1') return true;
  const parts = host.split('.');
  return parts.length === 4 && parts[0] === '127' && parts.every((p) => /^(0|[1-9][0-9]{0,2})$/.test(p) && Number(p) <= 255);
}
