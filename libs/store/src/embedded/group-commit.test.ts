import { describe, expect, it } from 'vitest';
import { GroupCommit, type GroupCommitConnection } from './group-commit.ts';

/** A connection whose write lock another process holds until `release()`. */
function lockedConnection() {
  const statements: string[] = [];
  let held = true;
  let inTransaction = false;
  const connection: GroupCommitConnection = {
    run(sql) {
      statements.push(sql);
      if (sql === 'COMMIT' || sql === 'ROLLBACK') inTransaction = false;
    },
    begin(wait) {
      if (held && !wait) return false;
      statements.push('BEGIN IMMEDIATE');
      inTransaction = true;
      return true;
    },
    get inTransaction() {
      return inTransaction;
    },
  };
  return { connection, statements, release: () => (held = false) };
}

describe("group commit under another process's write lock", () => {
  it('keeps the batch queued while the lock is held; writes submitted meanwhile join it; one commit once free', async () => {
    const { connection, statements, release } = lockedConnection();
    const commits = new GroupCommit(() => connection, { lockTimeoutMs: 5_000 });
    const first = commits.submit(() => 'a');
    await new Promise((r) => setTimeout(r, 20));
    const second = commits.submit(() => 'b');
    expect(statements).toEqual([]);
    release();
    expect(await Promise.all([first, second])).toEqual(['a', 'b']);
    expect(statements.filter((s) => s === 'BEGIN IMMEDIATE' || s === 'COMMIT')).toEqual(['BEGIN IMMEDIATE', 'COMMIT']);
  });

  it('fails the waiting writes with a clear error once the lock timeout passes, and recovers after', async () => {
    const { connection, release } = lockedConnection();
    const commits = new GroupCommit(() => connection, { lockTimeoutMs: 50 });
    let ran = false;
    await expect(commits.submit(() => (ran = true))).rejects.toThrow(/write lock was held by another process for over 50 ms/);
    expect(ran).toBe(false);
    release();
    expect(await commits.submit(() => 'next')).toBe('next');
  });

  it('flush (closing) waits for the lock rather than dropping the queued writes', async () => {
    const { connection } = lockedConnection();
    const commits = new GroupCommit(() => connection, { lockTimeoutMs: 5_000 });
    const pending = commits.submit(() => 'kept');
    commits.flush();
    expect(await pending).toBe('kept');
  });
});
