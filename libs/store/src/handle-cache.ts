/**
 * Collection and log handles of a store adapter, kept by name and options so that repeated
 * `collection()`/`log()` calls skip the (idempotent) table or index creation. Shared by every
 * adapter so they cache the same way.
 */
export class HandleCache {
  private readonly handles = new Map<string, unknown>();

  get<H>(name: string, options: object, create: () => H): H {
    const key = `${name}\u0000${JSON.stringify(options)}`;
    let handle = this.handles.get(key) as H | undefined;
    if (handle === undefined) {
      handle = create();
      this.handles.set(key, handle);
    }
    return handle;
  }

  clear(): void {
    this.handles.clear();
  }
}
