import { userInfo } from 'node:os';
import { redactUserinfoPassword, spellingsOf, userinfoPassword } from '../url-userinfo.ts';
/**
 * Connection-string helpers that never need a server. A PostgreSQL URL may carry a password
 * (`postgres://user:secret@host/db`), and the adapter may be given one apart (`password`), so
 * nothing it reports (errors, health details) may contain either: every text that could echo
 * them goes through `redactPostgres` first.
 */

/** `scheme://authority...`; the authority ends at the first `/`, `?` or `#`. */
const CONNECTION_STRING = /^(postgres(?:ql)?:\/\/)([^/?#]*)/i;

/** The URL with its password (if any) replaced by `***`; the user name stays, for diagnosis. */
export function redactPostgresUrl(url: string): string {
  // `?password=...` is also read by node-postgres.
  return redactUserinfoPassword(url, CONNECTION_STRING).replace(/([?&]password=)[^&#]*/gi, '$1***');
}

/** The password spellings (raw and percent-decoded) that a URL carries, in its userinfo or query. */
export function urlPasswords(url: string): string[] {
  const found = [userinfoPassword(url, CONNECTION_STRING), ...[...url.matchAll(/[?&]password=([^&#]*)/gi)].map((m) => m[1] ?? '')];
  return [...new Set(found.filter((raw): raw is string => raw !== null && raw !== '').flatMap(spellingsOf))];
}

/** A redactor removing every URL (as its redacted form) and every password from a text. */
export function secretRedactor(urls: readonly string[], password: string | undefined): (text: string) => string {
  const secrets = [...urls.flatMap(urlPasswords), ...(password ? [password, encodeURIComponent(password)] : [])]
    // Longest first, so a password containing another is removed whole.
    .sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text;
    for (const url of urls) out = out.split(url).join(redactPostgresUrl(url));
    for (const secret of secrets) out = out.split(secret).join('***');
    return out;
  };
}

/**
 * The URL node-postgres is given: the user name libpq would use when the URL names none (the
 * operating system's user, as `psql` and `createdb` do; node-postgres would otherwise read only
 * `$USER`, which services and containers often lack), and `password` in the userinfo (node-postgres
 * lets what the connection string says override its `password` option, an absent one included).
 */
export function connectionUrl(url: string, password: string | undefined): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError(`postgres store: cannot read the connection string ${redactPostgresUrl(url)}`);
  }
  if (parsed.username === '' && !parsed.searchParams.has('user')) parsed.username = encodeURIComponent(userInfo().username);
  if (password !== undefined) {
    parsed.password = encodeURIComponent(password);
    parsed.searchParams.delete('password');
  }
  return parsed.toString();
}
