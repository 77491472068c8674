import { runLoad } from '../load.ts';
import { startPlatformFixture } from '../platform-fixture.ts';
import { sendRequest } from '../platform-setup.ts';
import type { BenchTarget, StartedTarget } from '../target.ts';

/**
 * About 23 KB per message: the echo model answers as much, so the agent's session holds its 40
 * turns at about 0.9 MB, near `[agents] session_max_bytes`' default of 1 MB. Each connection
 * cycles through this many messages, each starting with its own number, so the turns of the
 * session window are distinct texts, as in a conversation.
 */
const DISTINCT_MESSAGES = 500;

export function longSessionMessage(n: number): string {
  return `${n}: ${'Water damage in the kitchen, policy HO-1234; the adjuster visited twice. '.repeat(310)}`;
}

/** What a send target needs of the platform it drives. */
export interface SendingPlatform {
  url: string;
  agentId: string;
  token: string;
}

/** The request a target stands beside (checked once), and how it drives the load when not autocannon's one request. */
export type SendLoad = Pick<StartedTarget, 'request' | 'measure'>;

/** The long sends, each connection cycling through the distinct messages. */
export function longSessionLoad({ url, agentId, token }: SendingPlatform): SendLoad {
  const sends = Array.from({ length: DISTINCT_MESSAGES }, (_, n) => sendRequest(agentId, token, longSessionMessage(n)));
  return { request: sends[0]!, measure: (settings) => runLoad([url], sends, settings) };
}

/**
 * `all-in-one-send` with a long conversation: what a send costs when the session it adds to is
 * near its byte limit (docs/performance.md "A long session").
 */
export const allInOneSendLongSession: BenchTarget = {
  name: 'all-in-one-send-long-session',
  description: 'all-in-one POST /agents/{id}/send with 23 KB messages: the session at about 0.9 MB',
  async start({ nodeFlags }) {
    const platform = await startPlatformFixture({ nodeFlags, installAgent: true });
    return {
      urls: [platform.url],
      processes: [{ role: 'platform', pid: platform.pid }],
      ...longSessionLoad({ url: platform.url, agentId: platform.agentId!, token: platform.token }),
      stop: platform.stop,
    };
  },
};
