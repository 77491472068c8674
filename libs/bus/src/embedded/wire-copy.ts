/**
 * The embedded bus runs every payload through JSON, the way a network hop would, so in-process
 * callers cannot share references or rely on values the wire drops (a `Date` arrives as its ISO
 * string, `undefined` fields vanish, a `Map` becomes `{}`), and a payload over the bus's size
 * limit fails as it would over NATS. Code that works on the embedded bus then also works over NATS.
 */

/** The JSON text of a payload, and its size in bytes; `undefined` travels as an empty body. */
export interface Wire {
  readonly json: string | undefined;
  readonly bytes: number;
}

export function toWire(value: unknown): Wire {
  if (value === undefined) return { json: undefined, bytes: 0 };
  const json = JSON.stringify(value);
  return { json, bytes: Buffer.byteLength(json) };
}

export function fromWire<T>(wire: Wire): T {
  return (wire.json === undefined ? undefined : JSON.parse(wire.json)) as T;
}
