import { utf8Bytes } from '../agents/session-window.ts';
import { Errors } from '../errors/errors.ts';

/**
 * Spec §Errors SizeLimitExceeded ("Message ... too large"): a message over `[agents]
 * max_message_bytes`, counted in UTF-8 bytes. Checked by the api before anything is looked up
 * (answered 413, docs/invocation.md "Size limits") and again by the worker for every producer.
 */
export function assertMessageWithin(message: string, limitBytes: number): void {
  // UTF-8 takes 1 to 3 bytes per UTF-16 unit: most messages are decided without counting.
  if (message.length * 3 <= limitBytes) return;
  const bytes = utf8Bytes(message);
  if (bytes > limitBytes) throw Errors.messageTooLarge(bytes, limitBytes);
}
