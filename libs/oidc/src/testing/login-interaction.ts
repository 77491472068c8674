import type { IncomingMessage, ServerResponse } from 'node:http';
import type Provider from 'oidc-provider';

/** A person who can sign in at the test provider's login page; `roles` go in `realm_access.roles`. */
export interface HarnessUser {
  roles: string[];
}

const STANDARD_OIDC_SCOPES = new Set(['openid', 'profile', 'email', 'address', 'phone', 'offline_access']);

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function loginPage(uid: string, client: string, error: string | null): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Test provider sign-in</title><link rel="icon" href="data:,"></head><body>
<main><h1>Sign in to the test provider</h1><p>For ${escapeHtml(client)}</p>
${error === null ? '' : `<p role="alert">${escapeHtml(error)}</p>`}
<form method="post" action="/interaction/${escapeHtml(uid)}/login">
<label for="username">Username</label> <input id="username" name="username" autocomplete="off" required>
<button type="submit">Continue</button></form></main></body></html>`;
}

async function readForm(request: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > 16_384) throw new Error('form too large');
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/**
 * The provider's interaction endpoints (`/interaction/<uid>`), for the authorization code flow of
 * a browser test: a login form where a test types a username of `users` (no password: it is a
 * test provider on loopback), and a consent given at once for what the client asked (its OIDC
 * scopes and the resource's scopes), so that one form stands between the client and its code.
 * Returns false for any other path.
 */
export async function handleInteraction(
  provider: Provider,
  users: Record<string, HarnessUser>,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<boolean> {
  const path = (request.url ?? '/').split('?')[0] ?? '/';
  const match = /^\/interaction\/([^/]+)(\/login)?$/.exec(path);
  if (match === null) return false;
  const details = await provider.interactionDetails(request, response);
  const clientId = typeof details.params.client_id === 'string' ? details.params.client_id : '';
  const html = (status: number, body: string): void =>
    void response
      .writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
      .end(body);

  if (details.prompt.name === 'login') {
    if (request.method === 'GET' && match[2] === undefined) {
      html(200, loginPage(details.uid, clientId, null));
      return true;
    }
    if (request.method !== 'POST' || match[2] === undefined) {
      html(405, 'method not allowed');
      return true;
    }
    const username = (await readForm(request)).get('username')?.trim() ?? '';
    if (!Object.hasOwn(users, username)) {
      html(200, loginPage(details.uid, clientId, `No user '${username}' at this provider.`));
      return true;
    }
    await provider.interactionFinished(
      request,
      response,
      { login: { accountId: username } },
      { mergeWithLastSubmission: false },
    );
    return true;
  }

  // Consent: grant what the prompt says is missing, as a person clicking "allow" would.
  const grant =
    details.grantId === undefined
      ? new provider.Grant({ accountId: String(details.session?.accountId ?? ''), clientId })
      : await provider.Grant.find(details.grantId);
  if (grant === undefined) throw new Error(`grant ${details.grantId ?? ''} not found`);
  const missing = details.prompt.details as {
    missingOIDCScope?: string[];
    missingOIDCClaims?: string[];
    missingResourceScopes?: Record<string, string[]>;
  };
  if (missing.missingOIDCScope !== undefined)
    grant.addOIDCScope(missing.missingOIDCScope.filter((s) => STANDARD_OIDC_SCOPES.has(s)).join(' '));
  if (missing.missingOIDCClaims !== undefined) grant.addOIDCClaims(missing.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {}))
    grant.addResourceScope(indicator, scopes.join(' '));
  const grantId = await grant.save();
  await provider.interactionFinished(
    request,
    response,
    { consent: { grantId } },
    { mergeWithLastSubmission: true },
  );
  return true;
}
