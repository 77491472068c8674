import type { ChannelOutbound } from '@agent-platform/contracts';
import type {
  ChannelConfig,
  ChannelConnection,
  ChannelContext,
  ChannelKind,
  InboundMessage,
} from '../channel-kind.ts';
import { optionalInteger, optionalUrl, requiredString, trimBase } from './config-fields.ts';
import { pause } from './pause.ts';

const DEFAULT_API_BASE_URL = 'https://api.telegram.org';
const DEFAULT_POLL_TIMEOUT_SECS = 25;
/** Pause after a failed poll or a failed delivery before trying again. */
const RETRY_DELAY_MS = 1_000;
/** How much longer than the long-poll timeout any Bot API call may take. */
const CALL_MARGIN_SECS = 15;
/** How long close() may spend confirming delivered updates. */
const CONFIRM_TIMEOUT_MS = 2_000;

interface TelegramConfig {
  botToken: string;
  apiBaseUrl: string;
  pollTimeoutSecs: number;
}

function readConfig(config: ChannelConfig): TelegramConfig {
  const botToken = requiredString(config, 'bot_token');
  return {
    botToken,
    apiBaseUrl: trimBase(
      optionalUrl(config, 'api_base_url', ['http:', 'https:']) ?? new URL(DEFAULT_API_BASE_URL),
    ),
    pollTimeoutSecs: optionalInteger(config, 'poll_timeout_secs', 0, 50) ?? DEFAULT_POLL_TIMEOUT_SECS,
  };
}

/**
 * Telegram: the Bot API, long-polling `getUpdates` in and `sendMessage` out. An update is
 * acknowledged (the next `offset`) only after `deliver` resolved, so a bridge that dies first
 * leaves it to the next bridge. See docs/channel-kinds.md#telegram.
 */
export const telegramKind: ChannelKind = {
  kind: 'telegram',
  fields: ['bot_token', 'api_base_url', 'poll_timeout_secs'],
  secretFields: ['bot_token'],
  destinationFields: ['api_base_url'],
  check(config) {
    readConfig(config);
  },
  async open(context) {
    const config = readConfig(context.config);
    const aborter = new AbortController();
    const api = telegramApi(context, config, aborter.signal);
    let polling: Promise<void> = Promise.resolve();
    try {
      const me = await api('getMe', {});
      if (me.ok) {
        context.setStatus('Connected');
        polling = pollUpdates(context, config, api, aborter.signal);
      } else
        context.setStatus({
          Error: `Telegram refused the bot token (getMe: ${me.description ?? me.error_code ?? 'refused'})`,
        });
    } catch (error) {
      context.setStatus({ Error: `Telegram Bot API unreachable: ${(error as Error).message}` });
    }
    return telegramConnection(api, aborter, () => polling);
  },
};

interface TelegramReply {
  ok: boolean;
  result?: unknown;
  error_code?: number;
  description?: string;
}

type TelegramApi = (
  method: string,
  body: Record<string, unknown>,
  signal?: AbortSignal,
) => Promise<TelegramReply>;

/** One Bot API call. The token is part of the URL: never log the URL. */
function telegramApi(context: ChannelContext, config: TelegramConfig, signal: AbortSignal): TelegramApi {
  return async (method, body, callSignal = signal) => {
    const response = await context.fetch(`${config.apiBaseUrl}/bot${config.botToken}/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      // Bounded: a stalled connection must not hold the poll loop forever.
      signal: AbortSignal.any([
        callSignal,
        AbortSignal.timeout((config.pollTimeoutSecs + CALL_MARGIN_SECS) * 1000),
      ]),
    });
    const text = await response.text();
    try {
      return JSON.parse(text) as TelegramReply;
    } catch {
      return { ok: false, error_code: response.status, description: `HTTP ${response.status}` };
    }
  };
}

interface TelegramUpdate {
  update_id: number;
  message?: {
    message_id: number;
    message_thread_id?: number;
    chat: { id: number };
    from?: { id: number; username?: string };
    text?: string;
  };
}

async function pollUpdates(
  context: ChannelContext,
  config: TelegramConfig,
  api: TelegramApi,
  signal: AbortSignal,
): Promise<void> {
  let offset: number | undefined;
  let sentOffset: number | undefined;
  while (!signal.aborted) {
    try {
      const reply = await api('getUpdates', {
        timeout: config.pollTimeoutSecs,
        allowed_updates: ['message'],
        ...(offset === undefined ? {} : { offset }),
      });
      sentOffset = offset;
      if (!reply.ok) {
        if (reply.error_code === 401)
          context.setStatus({ Error: 'Telegram refused the bot token (getUpdates: 401)' });
        throw new Error(`getUpdates failed: ${reply.description ?? reply.error_code ?? 'unknown error'}`);
      }
      for (const update of (reply.result ?? []) as TelegramUpdate[]) {
        const message = toInbound(update);
        // Delivered before the offset moves past it: the offset is the acknowledgement.
        if (message !== null) await context.deliver(message);
        offset = Math.max(offset ?? 0, update.update_id + 1);
      }
    } catch (error) {
      if (signal.aborted) return;
      context.logger.warn(
        { channel_id: context.channelId, reason: (error as Error).message },
        'telegram poll failed; retrying',
      );
      await pause(RETRY_DELAY_MS, signal);
    }
  }
  // Closing between a delivery and the next poll: confirm what was delivered, so the bridge that
  // takes the channel over is not handed it again (it would be de-duplicated, but needlessly).
  if (offset !== undefined && offset !== sentOffset)
    await api('getUpdates', { offset, timeout: 0, limit: 1 }, AbortSignal.timeout(CONFIRM_TIMEOUT_MS)).catch(
      () => undefined,
    );
}

function toInbound(update: TelegramUpdate): InboundMessage | null {
  const message = update.message;
  if (message === undefined || typeof message.text !== 'string') return null;
  return {
    peer_message_id: String(update.update_id),
    conversation: String(message.chat.id),
    thread: message.message_thread_id === undefined ? null : String(message.message_thread_id),
    sender: message.from?.username ?? (message.from === undefined ? '' : String(message.from.id)),
    text: message.text,
    meta: { message_id: String(message.message_id) },
  };
}

function telegramConnection(
  api: TelegramApi,
  aborter: AbortController,
  polling: () => Promise<void>,
): ChannelConnection {
  return {
    async send(message: ChannelOutbound) {
      if (aborter.signal.aborted) throw new Error('the telegram channel is closed');
      const replyTo = message.meta.message_id;
      const reply = await api('sendMessage', {
        chat_id: message.conversation,
        text: message.text,
        ...(message.thread === null ? {} : { message_thread_id: Number(message.thread) }),
        ...(replyTo === undefined
          ? {}
          : { reply_parameters: { message_id: Number(replyTo), allow_sending_without_reply: true } }),
      });
      if (!reply.ok)
        throw new Error(
          `Telegram sendMessage refused: ${reply.description ?? reply.error_code ?? 'unknown error'}`,
        );
    },
    async close() {
      aborter.abort();
      await polling();
    },
  };
}
