// A real OpenID provider on loopback for trying `[auth] mode = "oidc"` without an identity
// provider of your own (docs/auth.md "Trying it locally"). Never for production: clients, roles
// and keys live in memory and vanish when it stops.
//
//   npm run dev:oidc -- [--port 4300] [--audience http://127.0.0.1:4200]
//                       [--client <id>=<role>[,<role>...]]... [--secret <client secret>]
//
// Each client gets access tokens through the client credentials grant (a JWT signed RS256, the
// client's roles in the claim `realm_access.roles`, as Keycloak puts them).
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { startOidcProvider } from '@agent-platform/oidc/testing';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '4300' },
    audience: { type: 'string', default: 'http://127.0.0.1:4200' },
    client: { type: 'string', multiple: true, default: ['platform-admin=platform-admins', 'claims-analyst=claims-team'] },
    secret: { type: 'string' },
  },
});

const port = Number(values.port);
if (!Number.isInteger(port) || port < 1 || port > 65_535) {
  console.error(`--port must be a port number (got '${values.port}')`);
  process.exit(2);
}
const clients: Record<string, { roles: string[] }> = {};
for (const spec of values.client) {
  const [id, roles = ''] = spec.split('=', 2);
  if (id === undefined || id === '' || roles === '') {
    console.error(`--client must be <id>=<role>[,<role>...] (got '${spec}')`);
    process.exit(2);
  }
  clients[id] = { roles: roles.split(',').filter((role) => role !== '') };
}
const secret = values.secret ?? randomBytes(18).toString('base64url');

try {
  const provider = await startOidcProvider({ audience: values.audience, clients, port, clientSecret: secret, accessTokenTtlSecs: 3600 });
  // One write: whoever waits for the "listening" line (a script, the README test) finds the
  // secret beside it rather than in a later chunk of the pipe.
  console.log(
    [
      `dev OpenID provider listening: issuer ${provider.issuer}, audience ${values.audience}`,
      ...Object.entries(clients).map(([id, { roles }]) => `  client ${id} (roles ${roles.join(', ')})`),
      `  client secret (every client): ${secret}`,
      `  a token: curl -s -u <client>:<secret> -d grant_type=client_credentials -d resource=${values.audience} ${provider.issuer}/token`,
    ].join('\n'),
  );
  const stop = () => void provider.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
} catch (error) {
  console.error(`dev OpenID provider: cannot listen on 127.0.0.1:${port}: ${(error as Error).message}`);
  process.exit(1);
}
