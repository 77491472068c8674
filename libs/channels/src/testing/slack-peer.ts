import { randomUUID } from 'node:crypto';
import { slackSignature } from '../kinds/slack-signature.ts';
import { parseBody, sendJson, startHttpPeer } from './http-peer.ts';

export interface SlackPost {
  channel: string;
  text: string;
  thread_ts: string | null;
}

export interface SlackPeer {
  /** The Web API base: a channel's `api_base_url`. */
  apiBaseUrl: string;
  /** The bot token `auth.test` and `chat.postMessage` accept. */
  botToken: string;
  /** The signing secret `postEvent` signs with: a channel's `signing_secret`. */
  signingSecret: string;
  /** Every accepted `chat.postMessage`, in order. */
  posts: SlackPost[];
  /** Signs and POSTs an Events API payload to `url` (e.g. an api node's `/channels/{id}/inbound`). */
  postEvent(url: string, payload: unknown, options?: SignOptions): Promise<{ status: number; body: unknown }>;
  close(): Promise<void>;
}

export interface SignOptions {
  /** Seconds since the epoch; default now. An old one makes a replay. */
  timestamp?: number;
  /** Sign with another secret: a forged request. */
  signingSecret?: string;
  /** Extra headers (e.g. an `authorization` for the api node). */
  headers?: Record<string, string>;
}

/**
 * A local server speaking the Slack Web API subset a channel uses (`auth.test`,
 * `chat.postMessage`, bearer token checked), and the Events API's sending side (`postEvent`).
 */
export async function startSlackPeer(
  options: { botToken?: string; signingSecret?: string } = {},
): Promise<SlackPeer> {
  const botToken = options.botToken ?? `xoxb-${randomUUID()}`;
  const signingSecret = options.signingSecret ?? randomUUID().replaceAll('-', '');
  const posts: SlackPost[] = [];
  let seq = 0;
  const server = await startHttpPeer((request, body, response) => {
    const method = (request.url ?? '').replace(/^\/api\//, '').split('?')[0];
    const params = parseBody(request, body);
    const authorized = request.headers.authorization === `Bearer ${botToken}` || params.token === botToken;
    if (!authorized) return sendJson(response, 200, { ok: false, error: 'invalid_auth' });
    if (method === 'auth.test')
      return sendJson(response, 200, { ok: true, user_id: 'UBOT', team_id: 'TLOCAL', bot_id: 'BLOCAL' });
    if (method === 'chat.postMessage') {
      if (typeof params.channel !== 'string' || params.channel === '')
        return sendJson(response, 200, { ok: false, error: 'channel_not_found' });
      const thread = typeof params.thread_ts === 'string' ? params.thread_ts : null;
      posts.push({
        channel: params.channel,
        text: typeof params.text === 'string' ? params.text : '',
        thread_ts: thread,
      });
      seq += 1;
      return sendJson(response, 200, {
        ok: true,
        channel: params.channel,
        ts: `${Math.floor(Date.now() / 1000)}.${String(seq).padStart(6, '0')}`,
      });
    }
    sendJson(response, 200, { ok: false, error: 'unknown_method' });
  });
  return {
    apiBaseUrl: `${server.url}/api`,
    botToken,
    signingSecret,
    posts,
    postEvent: (url, payload, sign = {}) => postSlackEvent(url, payload, { signingSecret, ...sign }),
    close: () => server.close(),
  };
}

/** Headers Slack sends with an Events API request: timestamp and `v0=` signature of the raw body. */
export function signSlackRequest(
  signingSecret: string,
  rawBody: string,
  timestamp = Math.floor(Date.now() / 1000),
): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-slack-request-timestamp': String(timestamp),
    'x-slack-signature': slackSignature(signingSecret, String(timestamp), rawBody),
  };
}

export async function postSlackEvent(
  url: string,
  payload: unknown,
  options: SignOptions & { signingSecret: string },
): Promise<{ status: number; body: unknown }> {
  const raw = JSON.stringify(payload);
  const response = await fetch(url, {
    method: 'POST',
    headers: { ...signSlackRequest(options.signingSecret, raw, options.timestamp), ...options.headers },
    body: raw,
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: keep the text.
  }
  return { status: response.status, body };
}

export interface SlackMessageInput {
  channel: string;
  text: string;
  user?: string;
  /** The message's ts; default a fresh one. */
  ts?: string;
  thread_ts?: string;
  /** Default a fresh `Ev...` id; pass the same one to model Slack's retry of one event. */
  event_id?: string;
}

/** An `event_callback` payload carrying one user message, as Slack sends it. */
export function slackMessageEvent(input: SlackMessageInput): Record<string, unknown> {
  const ts =
    input.ts ??
    `${Math.floor(Date.now() / 1000)}.${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}`;
  return {
    token: 'deprecated-verification-token',
    team_id: 'TLOCAL',
    api_app_id: 'ALOCAL',
    type: 'event_callback',
    event_id: input.event_id ?? `Ev${randomUUID().replaceAll('-', '').slice(0, 10).toUpperCase()}`,
    event_time: Math.floor(Date.now() / 1000),
    event: {
      type: 'message',
      channel: input.channel,
      user: input.user ?? 'U123',
      text: input.text,
      ts,
      ...(input.thread_ts === undefined ? {} : { thread_ts: input.thread_ts }),
      channel_type: 'channel',
    },
  };
}
