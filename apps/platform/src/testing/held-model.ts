import type { PlatformConfig } from '@agent-platform/contracts';
import type { DeepPartial } from '@agent-platform/api/testing';
import { startFakeOpenAiServer, type FakeOpenAiServer, type FakeUsage } from '@agent-platform/testkit';

/** A model that echoes, holding its answers until the test releases them. */
export interface HeldModel {
  readonly server: FakeOpenAiServer;
  /** Lets every held answer through (and every later one at once). */
  release(): void;
  /** Makes it the default model (`oa/m`), priced at 1 USD per million tokens each way. */
  readonly config: DeepPartial<PlatformConfig>;
  close(): Promise<void>;
}

/**
 * A local OpenAI-compatible server (STYLE §5) that answers the last user message back, holding
 * the answer while `holds(text)` is true and the test has not called `release()`: for tests of
 * what happens while a model call is in flight (slots, repeats, cancellation).
 */
export async function startHeldModel(options: { holds?: (text: string) => boolean; usage?: FakeUsage } = {}): Promise<HeldModel> {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const holds = options.holds ?? (() => true);
  const server = await startFakeOpenAiServer({
    fallback: (request) => {
      const text = String(request.body?.messages?.at(-1)?.content ?? '');
      return { text, ...(holds(text) ? { hold: held } : {}), ...(options.usage === undefined ? {} : { usage: options.usage }) };
    },
  });
  return {
    server,
    release,
    config: {
      providers: [{ id: 'oa', kind: 'openai', base_url: server.url, models: ['m'], input_usd_per_mtok: 1, output_usd_per_mtok: 1 }],
      models: { default: 'oa/m' },
    },
    close: async () => {
      release();
      await server.close();
    },
  };
}
