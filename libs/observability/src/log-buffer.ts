/**
 * The last N log lines, kept in memory so that GET /logs can answer without a log file. Lines are
 * the exact JSON text written to the destination (already redacted), without the newline.
 */
export interface LogBuffer {
  /** The newest `n` lines, oldest first. */
  tail(n: number): string[];
  /** Every retained line, oldest first. */
  lines(): string[];
}

/** A LogBuffer that is also the write target pino writes formatted lines to. */
export interface LogSink extends LogBuffer {
  write(chunk: string): void;
}

export function createLogBuffer(capacity: number): LogSink {
  if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`log buffer capacity must be >= 1, got ${capacity}`);
  // A fixed array used as a ring: O(1) writes no matter how chatty the process is.
  const ring: string[] = new Array<string>(capacity);
  let next = 0;
  let size = 0;

  const push = (line: string): void => {
    ring[next] = line;
    next = (next + 1) % capacity;
    if (size < capacity) size += 1;
  };

  const ordered = (count: number): string[] => {
    const n = Math.max(0, Math.min(count, size));
    const out: string[] = [];
    for (let i = size - n; i < size; i += 1) out.push(ring[(next - size + i + capacity * 2) % capacity] ?? '');
    return out;
  };

  return {
    write(chunk: string): void {
      for (const line of chunk.split('\n')) if (line.length > 0) push(line);
    },
    tail: (n) => ordered(n),
    lines: () => ordered(size),
  };
}
