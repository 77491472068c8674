import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider, { errors as providerErrors } from 'oidc-provider';
import { handleInteraction, type HarnessUser } from './login-interaction.ts';

/** A client of the test provider: its secret, and the roles put in its tokens' `realm_access.roles`. */
export interface HarnessClient {
  roles: string[];
}

/**
 * A public client (no secret, PKCE required) of the authorization code flow, as a browser app
 * such as the dashboard registers: its redirect URIs, exactly. The token endpoint answers its
 * origin's CORS requests (oidc-provider's rule for public clients).
 */
export interface HarnessPublicClient {
  redirectUris: string[];
}

export type { HarnessUser } from './login-interaction.ts';

export interface OidcProviderHarness {
  /** `http://127.0.0.1:<port>` (loopback http is an allowed issuer). */
  issuer: string;
  audience: string;
  /** The provider's signing key, private half included, so that a test can forge tokens it signs. */
  signingKey: JWK & { kid: string };
  /** The provider's public signing key as it serves it. */
  publicKey: JWK & { kid: string };
  jwksUri: string;
  /** Requests the provider answered, by path (`/jwks`, `/.well-known/openid-configuration`, `/token`). */
  hits(path: string): number;
  /** A real access token of `clientId` (client credentials grant, resource = audience), a JWT. */
  accessToken(clientId: string): Promise<string>;
  close(): Promise<void>;
}

const CLIENT_SECRET = 'test-client-secret-0123456789abcdef';

/**
 * A real OpenID provider (the `oidc-provider` package) on a free loopback port, issuing JWT access
 * tokens (RFC 9068, header `typ: at+jwt`) through the client credentials grant with a resource
 * indicator (RFC 8707) for `audience`, signed RS256 with a key the test holds. Each client's roles
 * ride in the nested claim `realm_access.roles` (extraTokenClaims), as Keycloak puts them.
 */
export async function startOidcProvider(options: {
  audience: string;
  clients: Record<string, HarnessClient>;
  accessTokenTtlSecs?: number;
  /** Loopback port to listen on; default: a free one. */
  port?: number;
  /** The clients' secret; default: a fixed test secret. */
  clientSecret?: string;
  /** Browser clients of the authorization code flow with PKCE; none by default. */
  publicClients?: Record<string, HarnessPublicClient>;
  /** Who may sign in at the login page (`/interaction/<uid>`), with the roles of their tokens. */
  users?: Record<string, HarnessUser>;
}): Promise<OidcProviderHarness> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = `provider-${Math.random().toString(36).slice(2, 10)}`;
  const signingKey = { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
  const servedKey = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  const counts = new Map<string, number>();
  let provider: Provider | null = null;
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    counts.set(path, (counts.get(path) ?? 0) + 1);
    if (provider === null) return void response.writeHead(503).end();
    const running = provider;
    handleInteraction(running, options.users ?? {}, request, response)
      .then(async (handled) => {
        if (!handled) await running.callback()(request, response);
      })
      .catch((error: unknown) => {
        if (!response.headersSent) response.writeHead(400, { 'content-type': 'text/plain' });
        response.end(`interaction failed: ${(error as Error).message}`);
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  const clientSecret = options.clientSecret ?? CLIENT_SECRET;
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const resourceServer = {
    scope: 'registry',
    audience: options.audience,
    accessTokenFormat: 'jwt' as const,
    accessTokenTTL: options.accessTokenTtlSecs ?? 300,
    jwt: { sign: { alg: 'RS256' as const } },
  };
  const users = options.users ?? {};
  provider = new Provider(issuer, {
    clients: [
      ...Object.keys(options.clients).map((client_id) => ({
        client_id,
        client_secret: clientSecret,
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
      })),
      ...Object.entries(options.publicClients ?? {}).map(([client_id, client]) => ({
        client_id,
        token_endpoint_auth_method: 'none' as const,
        grant_types: ['authorization_code'],
        response_types: ['code' as const],
        redirect_uris: client.redirectUris,
      })),
    ],
    findAccount: (_ctx, sub) =>
      Object.hasOwn(users, sub) ? { accountId: sub, claims: () => ({ sub }) } : undefined,
    jwks: { keys: [signingKey] },
    // Every lifetime set, so that oidc-provider does not print a notice for each default it uses.
    ttl: {
      ClientCredentials: options.accessTokenTtlSecs ?? 300,
      AccessToken: options.accessTokenTtlSecs ?? 300,
      AuthorizationCode: 60,
      IdToken: 300,
      Interaction: 600,
      Session: 3600,
      Grant: 3600,
    },
    // oidc-provider's own rule, stated: a public client's token requests are answered to its origin.
    clientBasedCORS: (_ctx, origin, client) =>
      client.clientAuthMethod === 'none' &&
      (client.redirectUris ?? []).some((uri) => new URL(uri).origin === origin),
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => options.audience,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => {
          if (resource !== options.audience) throw new providerErrors.InvalidTarget();
          return resourceServer;
        },
      },
    },
    // A person's token carries the person's roles; a client credentials token the client's.
    extraTokenClaims: (_ctx, token) => {
      const account =
        'accountId' in token && typeof token.accountId === 'string' ? token.accountId : undefined;
      const roles =
        account === undefined ? options.clients[token.clientId ?? '']?.roles : users[account]?.roles;
      return { realm_access: { roles: roles ?? [] } };
    },
  });

  return {
    issuer,
    audience: options.audience,
    signingKey,
    publicKey: servedKey,
    jwksUri: `${issuer}/jwks`,
    hits: (path) => counts.get(path) ?? 0,
    async accessToken(clientId) {
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
        },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          resource: options.audience,
          scope: 'registry',
        }).toString(),
      });
      const body = (await response.json()) as {
        access_token?: string;
        error?: string;
        error_description?: string;
      };
      if (body.access_token === undefined)
        throw new Error(
          `token request failed: ${response.status} ${body.error ?? ''} ${body.error_description ?? ''}`,
        );
      return body.access_token;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
