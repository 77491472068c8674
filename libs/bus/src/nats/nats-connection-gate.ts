/**
 * Whether the connection is up, from the client's status events, and a way to wait for it.
 *
 * Why it exists: the nats.js client discards its outbound buffer at every reconnection attempt
 * (`prepare()` resets it), so a message published while the connection is down is silently
 * lost: a request would then time out although the server came back long before. Requests (and
 * the replies of served requests) therefore wait here until the client has reconnected, which
 * the client reports only after it re-sent its subscriptions, so a reply can find its inbox.
 */
export class ConnectionGate {
  private up = true;
  private closed = false;
  /** When the connection last came (back) up; 0 for the first connection. */
  private upAt = 0;
  private readonly waiters = new Set<(up: boolean) => void>();

  get isUp(): boolean {
    return this.up && !this.closed;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  markDown(): void {
    this.up = false;
  }

  /** Milliseconds since the last reconnection; Infinity when it never dropped. */
  sinceReconnectMs(now = Date.now()): number {
    return this.upAt === 0 ? Number.POSITIVE_INFINITY : now - this.upAt;
  }

  markUp(): void {
    this.up = true;
    this.upAt = Date.now();
    this.release(true);
  }

  /** Nothing will reconnect any more: every waiter is released (false). */
  close(): void {
    this.closed = true;
    this.release(false);
  }

  /** Resolves true once the connection is up (at once when it is), false after `timeoutMs` or on close. */
  whenUp(timeoutMs: number): Promise<boolean> {
    if (this.isUp) return Promise.resolve(true);
    if (this.closed || timeoutMs <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (up: boolean): void => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve(up);
      };
      const timer = setTimeout(() => done(false), timeoutMs);
      this.waiters.add(done);
    });
  }

  private release(up: boolean): void {
    for (const waiter of [...this.waiters]) waiter(up);
  }
}
