/**
 * A map that keeps its most recently used entries up to a total size (whatever unit the caller
 * counts: bytes, characters), the least recently used going first. For values that never go stale
 * under their key: a session turn's immutable content by id, what a pure detector found in a text.
 */
export class SizedLru<K, V> {
  private readonly entries = new Map<K, { value: V; size: number }>();
  private total = 0;

  constructor(private readonly maxSize: number) {}

  /** The value, now the most recently used; undefined when absent. */
  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  /** Keeps `value` (of `size`) unless the key is held already or the value alone is larger than the whole. */
  set(key: K, value: V, size: number): void {
    if (size > this.maxSize || this.entries.has(key)) return;
    this.entries.set(key, { value, size });
    this.total += size;
    for (const [oldest, entry] of this.entries) {
      if (this.total <= this.maxSize) break;
      this.entries.delete(oldest);
      this.total -= entry.size;
    }
  }

  delete(key: K): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.total -= entry.size;
  }
}
