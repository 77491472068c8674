/**
 * The password in a connection string's userinfo (`scheme://user:secret@host...`), for the
 * adapters whose URLs carry one (MongoDB, PostgreSQL). `pattern` captures the scheme (group 1) and
 * the authority (group 2): each adapter knows where its authority ends.
 */

/** The URL with its userinfo password (if any) replaced by `***`; the user name stays, for diagnosis. */
export function redactUserinfoPassword(url: string, pattern: RegExp): string {
  const match = pattern.exec(url);
  if (match === null) return url.includes('@') ? '<unparseable connection string>' : url;
  const [, scheme = '', authority = ''] = match;
  const at = authority.lastIndexOf('@');
  if (at < 0) return url;
  const userinfo = authority.slice(0, at);
  const colon = userinfo.indexOf(':');
  if (colon < 0) return url;
  const rest = url.slice(scheme.length + authority.length);
  return `${scheme}${userinfo.slice(0, colon)}:***${authority.slice(at)}${rest}`;
}

/** The raw userinfo password of the URL, or null when it has none. */
export function userinfoPassword(url: string, pattern: RegExp): string | null {
  const authority = pattern.exec(url)?.[2] ?? '';
  const at = authority.lastIndexOf('@');
  const colon = authority.indexOf(':');
  if (at < 0 || colon < 0 || colon > at) return null;
  const raw = authority.slice(colon + 1, at);
  return raw === '' ? null : raw;
}

/** A secret as it may appear in a text: raw, and percent-decoded when that differs. */
export function spellingsOf(raw: string): string[] {
  try {
    const decoded = decodeURIComponent(raw);
    return decoded === raw ? [raw] : [raw, decoded];
  } catch {
    // A malformed escape: only the raw spelling can appear anywhere.
    return [raw];
  }
}
