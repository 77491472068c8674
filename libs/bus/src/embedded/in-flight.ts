/** Tracks running handler calls so `drain()` can wait for exactly those that started before it. */
export class InFlight {
  private readonly running = new Set<Promise<unknown>>();

  get size(): number {
    return this.running.size;
  }

  /** Registers a running call; the returned promise is the same call, settled the same way. */
  track<T>(work: Promise<T>): Promise<T> {
    const settled = work.then(
      () => undefined,
      () => undefined,
    );
    this.running.add(settled);
    void settled.then(() => this.running.delete(settled));
    return work;
  }

  /** Resolves once every call tracked so far, and any tracked meanwhile, has settled. */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }
}
