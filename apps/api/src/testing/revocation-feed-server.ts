import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Revocation } from '@agent-platform/contracts';
import { signRevocationFeed, type RegistrySigner } from '@agent-platform/registry-core';

export interface RevocationFeedServer {
  /** `http://127.0.0.1:<port>`: what `[catalog] registry_url` names. */
  readonly url: string;
  /** The `since` of every GET /revocations received, in order. */
  readonly requests: number[];
  /** Authorization headers received (to check the bearer), in order. */
  readonly authorizations: Array<string | undefined>;
  /** Publishes a security yank: the next seq. */
  revoke(name: string, version: string, reason?: string): Revocation;
  /** The signed feed from `since`, as GET /revocations serves it (and a registry pushes it). */
  feed(since: number, signer?: RegistrySigner): Promise<string>;
  /** From now on, answers with what `tamper` makes of the genuine JWS (untrusted key, changed payload). */
  serveInstead(tamper: ((jws: string, since: number) => Promise<string>) | null): void;
  close(): Promise<void>;
}

/**
 * A small registry stand-in for revocation tests: `GET /revocations?since=N` answers
 * `{feed}`, a JWS signed with a real Ed25519 key through registry-core, as the registry does
 * (docs/registry.md "Revocation feed"). Anything else is 404.
 */
export async function startRevocationFeedServer(signer: RegistrySigner): Promise<RevocationFeedServer> {
  const entries: Revocation[] = [];
  const requests: number[] = [];
  const authorizations: Array<string | undefined> = [];
  let tamper: ((jws: string, since: number) => Promise<string>) | null = null;

  const feed = (since: number, by: RegistrySigner = signer) =>
    signRevocationFeed(by, { since, latest_seq: entries.at(-1)?.seq ?? 0, revocations: entries.filter((r) => r.seq > since) }, new Date());

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method !== 'GET' || url.pathname !== '/revocations') {
      res.writeHead(404).end();
      return;
    }
    const since = Number(url.searchParams.get('since') ?? '0');
    requests.push(since);
    authorizations.push(req.headers.authorization);
    void feed(since)
      .then((jws) => (tamper === null ? jws : tamper(jws, since)))
      .then((jws) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ feed: jws })));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    authorizations,
    revoke(name, version, reason = `${name} ${version} sends claims to a third party`) {
      const entry: Revocation = { seq: entries.length + 1, name, version, reason, revoked_at: new Date().toISOString() };
      entries.push(entry);
      return entry;
    },
    feed,
    serveInstead(next) {
      tamper = next;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
