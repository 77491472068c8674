/**
 * A one-time asynchronous setup (a table and its indexes) that every operation awaits. A failed
 * attempt (the server down at that moment) is not kept: the next operation tries again.
 */
export class Lazy {
  private pending: Promise<void> | null = null;

  constructor(private readonly run: () => Promise<void>) {}

  get(): Promise<void> {
    this.pending ??= this.run().catch((error: unknown) => {
      this.pending = null;
      throw error;
    });
    return this.pending;
  }
}
