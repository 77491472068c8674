import type { PiiCategory } from '@agent-platform/contracts';

/** Where a value of personal data sits in a text: `text.slice(start, end)`. */
export interface TextSpan {
  start: number;
  end: number;
}

export interface PiiSpan extends TextSpan {
  category: PiiCategory;
}

/** One category's detector: pure, synchronous, over one text. */
export interface Detector {
  readonly category: PiiCategory;
  detect(text: string): TextSpan[];
}

/**
 * The spans of every match of `pattern` (which must carry the `g` and `d` flags) that `accept`
 * keeps. A named group `value` narrows the span to that group: cue words ("policy number is")
 * are matched but not replaced.
 */
export function matchSpans(
  pattern: RegExp,
  text: string,
  accept: (value: string, match: RegExpExecArray) => boolean = () => true,
): TextSpan[] {
  const spans: TextSpan[] = [];
  for (const match of text.matchAll(pattern)) {
    const group = match.indices?.groups?.value;
    const [start, end] = group ?? match.indices?.[0] ?? [match.index, match.index + match[0].length];
    const value = text.slice(start, end);
    if (value.length > 0 && accept(value, match)) spans.push({ start, end });
  }
  return spans;
}

/** The digits of a text: `4111 1111-1111` -> `411111111111`. */
export function digitsOf(text: string): string {
  return text.replace(/\D/g, '');
}
