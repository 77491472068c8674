import type { PiiCategory } from '@agent-platform/contracts';
import type { Detector } from '../span.ts';
import { matchSpans } from '../span.ts';

/**
 * Policy and claim numbers, whose formats are each carrier's own: `[gateway]
 * policy_number_patterns` and `claim_number_patterns` hold JavaScript regular expressions,
 * matched case-insensitively; a named group `value` is the part replaced (so a cue word can be part
 * of the pattern without being tokenised). The defaults (DEFAULT_POLICY_NUMBER_PATTERNS and
 * DEFAULT_CLAIM_NUMBER_PATTERNS in contracts) find `POL-123456` / `CLM-2024-0042` prefixes and
 * five or more digits right after the words "policy" or "claim". What they miss is whatever a
 * carrier's format looks like without a prefix or a cue: configure it.
 */
export function carrierNumberDetector(
  category: Extract<PiiCategory, 'policy_number' | 'claim_number'>,
  patterns: readonly string[],
): Detector {
  const compiled = patterns.map((source) => compileCarrierPattern(source));
  return { category, detect: (text) => compiled.flatMap((pattern) => matchSpans(pattern, text)) };
}

/** Throws a SyntaxError naming the problem for a pattern that is not a valid regular expression (config validation reuses it). */
export function compileCarrierPattern(source: string): RegExp {
  const pattern = new RegExp(source, 'dgi');
  // A pattern that matches the empty string would tokenise nothing yet loop over every position.
  if (pattern.test('')) throw new SyntaxError('the pattern matches an empty string');
  return pattern;
}
