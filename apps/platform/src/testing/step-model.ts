import type { PlatformConfig } from '@agent-platform/contracts';
import type { DeepPartial } from '@agent-platform/api/testing';
import { startFakeOpenAiServer, type FakeOpenAiServer, type FakeReply } from '@agent-platform/testkit';

/**
 * A model stand-in for workflow tests (STYLE §5: a local server speaking the OpenAI protocol). It
 * echoes the last user message, like the built-in `local` model, unless the message asks for
 * something else:
 * - `fail-first:<n>:<tag>` the first n calls whose message holds that tag fail (HTTP 400, not retried);
 * - `always-fail` every call fails;
 * - `slow:<ms>` the answer takes that long;
 * - `hold:<tag>` the answer waits for `release(tag)`.
 * `calls(text)` counts the calls whose message contained `text`.
 */
export interface StepModel {
  readonly server: FakeOpenAiServer;
  /** The default model `oa/m`, with provider calls tried once (a failure fails at once). */
  readonly config: DeepPartial<PlatformConfig>;
  calls(text: string): number;
  /** Calls whose message was exactly `text` (one step of one run, when each prompt is unique). */
  exactCalls(text: string): number;
  /** Lets the answers held under `tag` through (and every later one at once). */
  release(tag: string): void;
  close(): Promise<void>;
}

export async function startStepModel(): Promise<StepModel> {
  const holds = new Map<string, { promise: Promise<void>; release: () => void }>();
  const hold = (tag: string) => {
    let entry = holds.get(tag);
    if (entry === undefined) {
      let release!: () => void;
      const promise = new Promise<void>((resolve) => (release = resolve));
      holds.set(tag, (entry = { promise, release }));
    }
    return entry;
  };
  const failures = new Map<string, number>();
  const messages: string[] = [];
  const reply = (text: string): FakeReply => {
    const failFirst = /fail-first:(\d+):(\S+)/.exec(text);
    if (failFirst !== null) {
      const tag = failFirst[2]!;
      const seen = (failures.get(tag) ?? 0) + 1;
      failures.set(tag, seen);
      if (seen <= Number(failFirst[1])) return { status: 400, message: `scripted failure ${seen} of ${tag}` };
    }
    if (text.includes('always-fail')) return { status: 400, message: 'scripted failure' };
    const slow = /slow:(\d+)/.exec(text);
    const held = /hold:(\S+)/.exec(text);
    return { text, ...(slow === null ? {} : { delay_ms: Number(slow[1]) }), ...(held === null ? {} : { hold: hold(held[1]!).promise }) };
  };
  const server = await startFakeOpenAiServer({
    fallback: (request) => {
      const text = String(request.body?.messages?.at(-1)?.content ?? '');
      messages.push(text);
      return reply(text);
    },
  });
  return {
    server,
    config: {
      providers: [{ id: 'oa', kind: 'openai', base_url: server.url, models: ['m'] }],
      models: { default: 'oa/m' },
      model_calls: { llm_retry_max_attempts: 1 },
    },
    calls: (text) => messages.filter((m) => m.includes(text)).length,
    exactCalls: (text) => messages.filter((m) => m === text).length,
    release: (tag) => hold(tag).release(),
    close: async () => {
      for (const entry of holds.values()) entry.release();
      await server.close();
    },
  };
}
