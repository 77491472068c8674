/**
 * Copies a payload the way a network hop would: through JSON. The embedded bus runs every
 * payload through this so in-process callers cannot share references or rely on values the wire
 * drops (a `Date` arrives as its ISO string, `undefined` fields vanish, a `Map` becomes `{}`).
 * Code that works on the embedded bus then also works over NATS.
 */
export function copyThroughWire<T>(value: T): T {
  // JSON has no encoding for a top-level `undefined`; the wire carries an empty body instead.
  if (value === undefined) return value;
  return JSON.parse(JSON.stringify(value)) as T;
}
