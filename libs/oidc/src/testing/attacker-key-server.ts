import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK, type JWTPayload } from 'jose';

/** A key that is not the provider's, served from a JWKS URL that forged tokens point at (`jku`, `x5u`). */
export interface AttackerKeyServer {
  /** `http://127.0.0.1:<port>/jwks`, serving `{keys: [jwk]}`. */
  readonly url: string;
  /** The attacker's public key (kid `attacker`), to embed as a `jwk` header. */
  readonly jwk: JWK;
  /** How many requests the URL got: a validator that followed a header pointer would raise it. */
  hits(): number;
  /** A token signed RS256 with the attacker's private key, under the given header parameters. */
  sign(payload: JWTPayload, header: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

export async function startAttackerKeyServer(): Promise<AttackerKeyServer> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid: 'attacker', alg: 'RS256', use: 'sig' };
  let hits = 0;
  const server: Server = createServer((_request, response) => {
    hits += 1;
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`,
    jwk,
    hits: () => hits,
    sign: (payload, header) => new SignJWT(payload).setProtectedHeader({ alg: 'RS256', ...header }).sign(privateKey),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
