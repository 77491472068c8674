import type { PiiSpan } from './span.ts';

/**
 * What a detector found in texts it has seen, newest use last, up to `maxChars` characters of
 * text in all. A detector is pure, so the spans of a text never change: a conversation sent to
 * the model again with every turn (the agent's session) is scanned once per text, not once per
 * call (docs/privacy-gateway.md "Cost"). Spans are frozen: callers share them.
 */
export class DetectionCache {
  private readonly found = new Map<string, readonly PiiSpan[]>();
  private chars = 0;

  constructor(private readonly maxChars: number) {}

  get(text: string): readonly PiiSpan[] | undefined {
    const spans = this.found.get(text);
    if (spans !== undefined) {
      this.found.delete(text);
      this.found.set(text, spans);
    }
    return spans;
  }

  put(text: string, spans: readonly PiiSpan[]): readonly PiiSpan[] {
    const frozen = Object.freeze(spans.map((span) => Object.freeze({ ...span })));
    if (text.length > this.maxChars || this.found.has(text)) return frozen;
    this.found.set(text, frozen);
    this.chars += text.length;
    for (const oldest of this.found.keys()) {
      if (this.chars <= this.maxChars) break;
      this.found.delete(oldest);
      this.chars -= oldest.length;
    }
    return frozen;
  }
}
