import { createHash } from 'node:crypto';

/**
 * How the port's logical names become NATS names (docs/architecture.md, "Bus (NATS)").
 *
 * - A logical stream `workflow.steps` is the JetStream stream `AP_WORKFLOW_STEPS` capturing the
 *   one subject `AP.workflow.steps` (prefix configurable).
 * - A durable name becomes the JetStream durable consumer name by the same rule.
 *
 * JetStream names may not contain `.`, `*`, `>`, `/`, `\` or whitespace, and are case-sensitive
 * file names on the server. The readable form (upper-cased, dots as underscores) is one-to-one
 * only for names made of lower-case letters, digits, `-` and dot-separated tokens; any other name
 * (or a long one) keeps a readable stem and gets a hash suffix, so two logical names never
 * share a stream or a durable.
 */

const CANONICAL = /^[a-z0-9-]+(\.[a-z0-9-]+)*$/;
const MAX_READABLE = 64;
const STEM_LENGTH = 40;

/** A valid NATS subject: dot-separated non-empty tokens, no wildcards, no whitespace. */
const SUBJECT = /^[^\s.*>]+(\.[^\s.*>]+)*$/;

export function assertSubject(subject: string): void {
  if (!SUBJECT.test(subject)) throw new Error(`"${subject}" is not a valid bus subject (tokens, no wildcards or spaces)`);
}

/** The JetStream-safe form of a logical name (stream or durable). */
export function jetStreamName(name: string): string {
  const readable = name.toUpperCase().replace(/[^A-Z0-9_-]/g, '_');
  if (CANONICAL.test(name) && readable.length <= MAX_READABLE) return readable;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8).toUpperCase();
  return `${readable.slice(0, STEM_LENGTH)}_H${hash}`;
}

export interface StreamNames {
  /** The JetStream stream, e.g. `AP_WORKFLOW_STEPS`. */
  readonly stream: string;
  /** The one subject it captures, e.g. `AP.workflow.steps`. */
  readonly subject: string;
}

/** Letters, digits and `-`: one subject token, and no `_`, so `<prefix>_` splits unambiguously. */
const PREFIX = /^[A-Za-z0-9-]+$/;

export function assertStreamPrefix(prefix: string): void {
  if (!PREFIX.test(prefix)) throw new Error(`stream prefix "${prefix}" must be letters, digits and "-"`);
}

export function streamNames(prefix: string, logical: string): StreamNames {
  assertSubject(logical);
  return { stream: `${prefix}_${jetStreamName(logical)}`, subject: `${prefix}.${logical}` };
}
