/**
 * Waits for a condition instead of sleeping (STYLE §5): polls `condition` until it holds, and
 * fails with `message` once `timeoutMs` has passed.
 */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  options: { timeoutMs?: number; intervalMs?: number; message?: string } = {},
): Promise<void> {
  const { timeoutMs = 4_000, intervalMs = 5, message = 'condition' } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${message}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** A promise the test resolves by hand, to hold a handler open for exactly as long as needed. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}
