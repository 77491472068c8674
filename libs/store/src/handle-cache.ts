/**
 * Collection and log handles of a store adapter, kept by name and options so that repeated
 * `collection()`/`log()` calls skip the (idempotent) table or index creation. Shared by every
 * adapter so they cache the same way.
 *
 * Domain code asks for its collections per call (`webhookCollection(store)`), a dozen times per
 * request on a hot route, each time with a fresh options object: the options are compared by
 * value, member by member, not turned into a key string (`JSON.stringify` on every call was about
 * 1 % of a send's CPU profile).
 */
export class HandleCache {
  private readonly handles = new Map<string, Array<{ options: object; handle: unknown }>>();

  get<H>(name: string, options: object, create: () => H): H {
    let entries = this.handles.get(name);
    if (entries === undefined) {
      entries = [];
      this.handles.set(name, entries);
    }
    for (const entry of entries) {
      if (sameValue(entry.options, options)) return entry.handle as H;
    }
    const handle = create();
    entries.push({ options: structuredClone(options), handle });
    return handle;
  }

  clear(): void {
    this.handles.clear();
  }
}

/**
 * Equality of two JSON-like values (the options of a collection or log: objects, arrays, strings,
 * numbers, booleans). Members that are `undefined` count as absent, as `JSON.stringify` had them.
 */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((item, i) => sameValue(item, other[i]));
  }
  const left = definedKeys(a);
  const right = definedKeys(b);
  if (left.length !== right.length) return false;
  return left.every((key) => sameValue((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
}

function definedKeys(value: object): string[] {
  return Object.keys(value).filter((key) => (value as Record<string, unknown>)[key] !== undefined);
}
