import { redactUserinfoPassword, spellingsOf, userinfoPassword } from '../url-userinfo.ts';

/**
 * Connection-string helpers that never need a server. Connection strings carry credentials, so
 * nothing this adapter reports (errors, health details) may contain one verbatim: every text
 * that could echo the URL or its password goes through `redactSecrets` first.
 */

/** Used when neither `dbName` nor the URL path names a database. */
export const DEFAULT_DATABASE = 'agent_platform';

/**
 * `scheme://authority/path?query`. The authority may list several hosts (`h1:1,h2:2`), which
 * WHATWG `URL` cannot parse, hence a pattern. Userinfo must percent-encode `/ ? # @ :` (the
 * driver refuses it otherwise), so the authority ends at the first `/`, `?` or `#`.
 */
const CONNECTION_STRING = /^(mongodb(?:\+srv)?:\/\/)([^/?#]*)(?:\/([^?#]*))?/i;

/** The database named by the URL path (`mongodb://host/<db>`), else `agent_platform`. */
export function databaseNameFromUrl(url: string): string {
  const path = CONNECTION_STRING.exec(url)?.[3];
  if (path === undefined || path === '') return DEFAULT_DATABASE;
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/** The URL with its password (if any) replaced by `***`; the user name stays, for diagnosis. */
export function redactMongoUrl(url: string): string {
  return redactUserinfoPassword(url, CONNECTION_STRING);
}

/** Removes the URL's password (raw and percent-decoded) and the URL itself from `text`. */
export function redactSecrets(text: string, url: string): string {
  let out = text.split(url).join(redactMongoUrl(url));
  for (const secret of passwordSpellings(url)) out = out.split(secret).join('***');
  return out;
}

function passwordSpellings(url: string): string[] {
  const raw = userinfoPassword(url, CONNECTION_STRING);
  return raw === null ? [] : spellingsOf(raw);
}
