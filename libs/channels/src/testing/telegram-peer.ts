import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { parseBody, sendJson, startHttpPeer } from './http-peer.ts';

export interface TelegramMessageInput {
  chat_id: number;
  text: string;
  /** Sender: `{id, username}`; default a fixed user. */
  from?: { id: number; username?: string };
  message_thread_id?: number;
}

export interface TelegramSent {
  chat_id: string;
  text: string;
  message_thread_id: number | null;
  reply_to_message_id: number | null;
}

export interface TelegramUpdate {
  update_id: number;
  message: {
    message_id: number;
    message_thread_id?: number;
    date: number;
    chat: { id: number; type: string };
    from: { id: number; is_bot: boolean; username?: string };
    text: string;
  };
}

export interface TelegramPeer {
  /** A channel's `api_base_url`. */
  apiBaseUrl: string;
  /** The token the peer accepts. */
  botToken: string;
  /** Queues a user's message as a new update (served to the next/current getUpdates); returns it. */
  injectMessage(input: TelegramMessageInput): TelegramUpdate;
  /** Serves an already confirmed update once more, as Telegram does when a confirmation is lost. */
  redeliver(update: TelegramUpdate): void;
  /** Every accepted `sendMessage`, in order. */
  sent: TelegramSent[];
  /** Updates confirmed by an `offset` past them. */
  confirmed(): number[];
  /** An outage: while on, every call is answered 502 with an HTML page, as a failing front proxy does. */
  setOutage(on: boolean): void;
  close(): Promise<void>;
}

/**
 * A local server speaking the Bot API subset a channel uses: `getMe`, `getUpdates` (long poll
 * with Telegram's offset semantics: an offset confirms every update below it) and `sendMessage`.
 */
export async function startTelegramPeer(options: { botToken?: string } = {}): Promise<TelegramPeer> {
  const botToken = options.botToken ?? `123456:${randomUUID().replaceAll('-', '')}`;
  let pending: TelegramUpdate[] = [];
  /** Updates served once more whatever the offset says (a confirmation lost on the way). */
  let replays: TelegramUpdate[] = [];
  const confirmed: number[] = [];
  const sent: TelegramSent[] = [];
  const waiters = new Set<() => void>();
  let nextUpdateId = 100_000 + Math.floor(Math.random() * 100_000);
  let nextMessageId = 1;
  const wake = (): void => {
    for (const waiter of [...waiters]) waiter();
  };

  let outage = false;
  const server = await startHttpPeer(async (request, body, response) => {
    if (outage) {
      response.writeHead(502, { 'content-type': 'text/html' });
      return void response.end('<html><body>502 Bad Gateway</body></html>');
    }
    const match = /^\/bot([^/]+)\/(\w+)/.exec(request.url ?? '');
    if (match === null || match[1] !== botToken)
      return sendJson(response, 401, { ok: false, error_code: 401, description: 'Unauthorized' });
    const params = parseBody(request, body);
    switch (match[2]) {
      case 'getMe':
        return sendJson(response, 200, {
          ok: true,
          result: { id: 1, is_bot: true, first_name: 'Local', username: 'local_bot' },
        });
      case 'getUpdates': {
        const offset = params.offset === undefined ? undefined : Number(params.offset);
        if (offset !== undefined) {
          for (const u of pending) if (u.update_id < offset) confirmed.push(u.update_id);
          pending = pending.filter((u) => u.update_id >= offset);
        }
        const timeoutMs = Math.min(Number(params.timeout ?? 0), 50) * 1000;
        if (pending.length === 0 && replays.length === 0 && timeoutMs > 0)
          await waitForUpdate(request, timeoutMs, waiters);
        if (response.destroyed) return;
        const result = [...replays, ...pending].slice(0, Number(params.limit ?? 100));
        replays = [];
        return sendJson(response, 200, { ok: true, result });
      }
      case 'sendMessage': {
        const reply = params.reply_parameters as { message_id?: number } | undefined;
        const replyTo = reply?.message_id ?? params.reply_to_message_id;
        sent.push({
          chat_id: String(params.chat_id),
          text: typeof params.text === 'string' ? params.text : '',
          message_thread_id: params.message_thread_id === undefined ? null : Number(params.message_thread_id),
          reply_to_message_id: replyTo === undefined ? null : Number(replyTo),
        });
        return sendJson(response, 200, {
          ok: true,
          result: { message_id: nextMessageId++, chat: { id: Number(params.chat_id) }, text: params.text },
        });
      }
      default:
        return sendJson(response, 404, {
          ok: false,
          error_code: 404,
          description: 'Not Found: method not found',
        });
    }
  });

  return {
    apiBaseUrl: server.url,
    botToken,
    injectMessage(input) {
      const update: TelegramUpdate = {
        update_id: nextUpdateId++,
        message: {
          message_id: nextMessageId++,
          ...(input.message_thread_id === undefined ? {} : { message_thread_id: input.message_thread_id }),
          date: Math.floor(Date.now() / 1000),
          chat: { id: input.chat_id, type: input.chat_id < 0 ? 'supergroup' : 'private' },
          from: { is_bot: false, ...(input.from ?? { id: 42, username: 'alice' }) },
          text: input.text,
        },
      };
      pending.push(update);
      wake();
      return update;
    },
    redeliver(update) {
      replays.push(update);
      wake();
    },
    sent,
    confirmed: () => [...confirmed],
    setOutage(on) {
      outage = on;
      if (on) wake();
    },
    async close() {
      wake();
      await server.close();
    },
  };
}

/** Holds a long poll until an update arrives, the timeout passes, or the client goes away. */
function waitForUpdate(request: IncomingMessage, timeoutMs: number, waiters: Set<() => void>): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      waiters.delete(done);
      request.socket.off('close', done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    waiters.add(done);
    request.socket.once('close', done);
  });
}
