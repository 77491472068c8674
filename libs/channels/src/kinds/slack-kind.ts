import type { ChannelOutbound } from '@agent-platform/contracts';
import {
  refusedInbound,
  type ChannelConfig,
  type ChannelConnection,
  type ChannelContext,
  type ChannelKind,
  type HttpInboundRequest,
  type HttpInboundResult,
  type InboundMessage,
} from '../channel-kind.ts';
import { optionalUrl, requiredString, trimBase } from './config-fields.ts';
import { slackRequestProblem } from './slack-signature.ts';

const DEFAULT_API_BASE_URL = 'https://slack.com/api';
const HTTP = ['http:', 'https:'] as const;
/** A Web API call that takes longer is abandoned: open reports {Error}, send rejects. */
const CALL_TIMEOUT_MS = 15_000;

interface SlackConfig {
  botToken: string;
  signingSecret: string;
  apiBaseUrl: string;
}

function readConfig(config: ChannelConfig): SlackConfig {
  return {
    botToken: requiredString(config, 'bot_token'),
    signingSecret: requiredString(config, 'signing_secret'),
    apiBaseUrl: trimBase(optionalUrl(config, 'api_base_url', HTTP) ?? new URL(DEFAULT_API_BASE_URL)),
  };
}

/**
 * Slack: the Events API in (over `POST /channels/{id}/inbound` on any api node: signature and
 * timestamp checked here), the Web API out (`chat.postMessage` in the message's thread). See
 * docs/channel-kinds.md#slack.
 */
export const slackKind: ChannelKind = {
  kind: 'slack',
  fields: ['bot_token', 'signing_secret', 'api_base_url'],
  secretFields: ['bot_token', 'signing_secret'],
  destinationFields: ['api_base_url'],
  check(config) {
    readConfig(config);
  },
  async open(context) {
    const config = readConfig(context.config);
    const aborter = new AbortController();
    const call = (method: string, body: Record<string, unknown>): Promise<SlackReply> =>
      callSlack(context, config, method, body, aborter.signal);
    try {
      const auth = await call('auth.test', {});
      context.setStatus(
        auth.ok
          ? 'Connected'
          : { Error: `${auth.error ?? 'refused'}: Slack refused the bot token (auth.test)` },
      );
    } catch (error) {
      context.setStatus({ Error: `Slack Web API unreachable: ${(error as Error).message}` });
    }
    return slackConnection(call, aborter);
  },
  receiveHttp(config, request) {
    return receiveSlackEvent(readConfig(config), request);
  },
};

interface SlackReply {
  ok: boolean;
  error?: string;
  [key: string]: unknown;
}

async function callSlack(
  context: ChannelContext,
  config: SlackConfig,
  method: string,
  body: Record<string, unknown>,
  signal: AbortSignal,
): Promise<SlackReply> {
  const response = await context.fetch(`${config.apiBaseUrl}/${method}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${config.botToken}`,
      'content-type': 'application/json; charset=utf-8',
    },
    body: JSON.stringify(body),
    signal: AbortSignal.any([signal, AbortSignal.timeout(CALL_TIMEOUT_MS)]),
  });
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`Slack ${method} answered HTTP ${response.status}`);
  }
  return (await response.json()) as SlackReply;
}

function slackConnection(
  call: (method: string, body: Record<string, unknown>) => Promise<SlackReply>,
  aborter: AbortController,
): ChannelConnection {
  return {
    async send(message: ChannelOutbound) {
      if (aborter.signal.aborted) throw new Error('the slack channel is closed');
      const reply = await call('chat.postMessage', {
        channel: message.conversation,
        text: message.text,
        ...(message.thread === null ? {} : { thread_ts: message.thread }),
      });
      if (!reply.ok) throw new Error(`Slack chat.postMessage refused: ${reply.error ?? 'unknown error'}`);
    },
    async close() {
      aborter.abort();
    },
  };
}

interface SlackEventBody {
  type?: string;
  challenge?: string;
  event_id?: string;
  event?: {
    type?: string;
    subtype?: string;
    bot_id?: string;
    channel?: string;
    user?: string;
    text?: string;
    ts?: string;
    thread_ts?: string;
  };
}

/** Verifies and maps one Events API request (runs on an api node; no connection needed). */
function receiveSlackEvent(config: SlackConfig, request: HttpInboundRequest): HttpInboundResult {
  const problem = slackRequestProblem(config.signingSecret, request.headers, request.rawBody, request.now);
  if (problem !== null) return refusedInbound(401, `signature refused: ${problem}`);
  let body: SlackEventBody;
  try {
    body = JSON.parse(request.rawBody.toString('utf8')) as SlackEventBody;
  } catch {
    return refusedInbound(400, 'the body is not JSON');
  }
  if (body.type === 'url_verification')
    return { status: 200, body: { challenge: body.challenge ?? '' }, messages: [] };
  const message = body.type === 'event_callback' ? toInbound(body) : null;
  return { status: 200, body: { ok: true }, messages: message === null ? [] : [message] };
}

/**
 * A user's message in a channel, DM or thread; null for anything else. Messages with a subtype
 * (edits, joins, bot_message...) and messages from bots are ignored, so the bot never answers
 * itself.
 */
function toInbound(body: SlackEventBody): InboundMessage | null {
  const event = body.event;
  if (event === undefined || body.event_id === undefined) return null;
  // Only `message`: an @mention also arrives as `app_mention` with its own event id, and
  // answering both would reply twice.
  if (event.type !== 'message') return null;
  if (event.subtype !== undefined || event.bot_id !== undefined) return null;
  if (event.channel === undefined || event.ts === undefined) return null;
  return {
    peer_message_id: body.event_id,
    conversation: event.channel,
    thread: event.thread_ts ?? event.ts,
    sender: event.user ?? '',
    text: event.text ?? '',
    meta: { ts: event.ts },
  };
}
