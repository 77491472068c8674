import type { Static, TSchema } from 'typebox';
import { Compile } from 'typebox/compile';

/**
 * A type guard for `schema`, compiled on its first use instead of interpreted for every value:
 * `Value.Check` walks the schema each time (about 30 µs for a PlatformEvent, on every event a
 * send emits), the compiled check is a plain function. For what consumers take off the bus or the
 * queue: another process (or version) may have put it there.
 */
export function compiledCheck<T extends TSchema>(schema: T): (value: unknown) => value is Static<T> {
  let validator: { Check(value: unknown): boolean } | undefined;
  return (value: unknown): value is Static<T> => (validator ??= Compile(schema)).Check(value);
}
