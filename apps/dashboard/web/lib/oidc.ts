import type { DashboardConfig } from './session.ts';

type OidcConfig = NonNullable<DashboardConfig['oidc']>;

/** The path the provider sends the browser back to; register `<origin>/dashboard/callback`. */
export const CALLBACK_PATH = '/dashboard/callback';
const PENDING_KEY = 'agent-platform.dashboard.oidc';

interface Pending {
  state: string;
  verifier: string;
  token_endpoint: string;
  redirect_uri: string;
  return_to: string;
}

function base64url(bytes: Uint8Array): string {
  let text = '';
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

function random(length: number): string {
  return base64url(crypto.getRandomValues(new Uint8Array(length)));
}

async function discover(issuer: string): Promise<{ authorization_endpoint: string; token_endpoint: string }> {
  const response = await fetch(`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`, {
    credentials: 'omit',
  });
  if (!response.ok) throw new Error(`the provider's discovery document answered ${response.status}`);
  const document = (await response.json()) as {
    issuer?: string;
    authorization_endpoint?: string;
    token_endpoint?: string;
  };
  // The same rule the api applies to the documents it reads (docs/auth.md "Keys").
  if (document.issuer !== issuer)
    throw new Error(`the discovery document names the issuer '${document.issuer ?? ''}', not '${issuer}'`);
  if (document.authorization_endpoint === undefined || document.token_endpoint === undefined) {
    throw new Error('the discovery document has no authorization or token endpoint');
  }
  return { authorization_endpoint: document.authorization_endpoint, token_endpoint: document.token_endpoint };
}

/**
 * Authorization code flow with PKCE (RFC 7636, S256) as a public client: the verifier and state
 * stay in this tab's sessionStorage until the provider sends the browser back. PKCE needs
 * WebCrypto, which browsers give only to secure contexts (https, or a loopback address).
 */
export async function beginSignIn(oidc: OidcConfig, returnTo: string): Promise<void> {
  if (globalThis.crypto?.subtle === undefined) {
    throw new Error(
      'signing in with the provider needs a secure page: open the dashboard over https or on a loopback address',
    );
  }
  const endpoints = await discover(oidc.issuer);
  const verifier = random(32);
  const challenge = base64url(
    new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))),
  );
  const pending: Pending = {
    state: random(16),
    verifier,
    token_endpoint: endpoints.token_endpoint,
    redirect_uri: `${location.origin}${CALLBACK_PATH}`,
    return_to: returnTo,
  };
  sessionStorage.setItem(PENDING_KEY, JSON.stringify(pending));
  const url = new URL(endpoints.authorization_endpoint);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', oidc.client_id);
  url.searchParams.set('redirect_uri', pending.redirect_uri);
  url.searchParams.set('scope', oidc.scopes.join(' '));
  url.searchParams.set('state', pending.state);
  url.searchParams.set('code_challenge', challenge);
  url.searchParams.set('code_challenge_method', 'S256');
  if (oidc.resource !== null) url.searchParams.set('resource', oidc.resource);
  location.assign(url.toString());
}

/**
 * The provider's redirect back: checks `state`, trades the code and the verifier for an access
 * token at the token endpoint (the provider must allow this origin: CORS for public clients),
 * and returns it with the page to go back to. The pending entry is removed whatever happens, so
 * a code is never traded twice.
 */
export async function completeSignIn(
  oidc: OidcConfig,
  query: URLSearchParams,
): Promise<{ accessToken: string; returnTo: string }> {
  const saved = sessionStorage.getItem(PENDING_KEY);
  sessionStorage.removeItem(PENDING_KEY);
  if (query.has('error'))
    throw new Error(
      `the provider refused the sign-in: ${query.get('error_description') ?? query.get('error') ?? ''}`,
    );
  if (saved === null) throw new Error('no sign-in was in progress in this tab: start again');
  const pending = JSON.parse(saved) as Pending;
  if (query.get('state') !== pending.state)
    throw new Error('the sign-in answer does not match the request (state): start again');
  const code = query.get('code');
  if (code === null) throw new Error('the provider sent no authorization code');
  const body = new URLSearchParams({
    grant_type: 'authorization_code',
    code,
    redirect_uri: pending.redirect_uri,
    client_id: oidc.client_id,
    code_verifier: pending.verifier,
  });
  if (oidc.resource !== null) body.set('resource', oidc.resource);
  const response = await fetch(pending.token_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body,
    credentials: 'omit',
  });
  const token = (await response.json().catch(() => ({}))) as {
    access_token?: string;
    error?: string;
    error_description?: string;
  };
  if (!response.ok || token.access_token === undefined) {
    throw new Error(
      `the provider did not issue a token: ${token.error_description ?? token.error ?? String(response.status)}`,
    );
  }
  return { accessToken: token.access_token, returnTo: pending.return_to };
}
