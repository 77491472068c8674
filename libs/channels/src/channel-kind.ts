import type { ChannelInbound, ChannelOutbound } from '@agent-platform/contracts';
import type { FetchLike } from '@agent-platform/net';
import type { Logger } from '@agent-platform/observability';

/**
 * The channel port (STYLE §1: one port, one adapter per kind, one conformance suite). A
 * `ChannelKind` is what `GET /channels/kinds` lists; the channel bridge that holds a channel's
 * lease `open`s it with the channel's config and keeps the connection until the channel is
 * disabled, changed, deleted or moves to another bridge (docs/channels.md).
 *
 * Routing is by channel id, never by kind (the spec's known defect is not reproduced): every
 * inbound message an adapter hands to `deliver` names its channel id, and the platform looks the
 * channel up by that id.
 */
export type ChannelStatus = 'Connected' | 'Disabled' | 'NotConfigured' | { Error: string };

/** A channel's adapter-specific config, secrets in plaintext (only inside the bridge and the checks). */
export type ChannelConfig = Record<string, unknown>;

/** What an adapter reports of one inbound message; the bridge adds channel id, kind and time. */
export type InboundMessage = Omit<ChannelInbound, 'channel_id' | 'kind' | 'received_at'> & { received_at?: string };

/**
 * The meta key of a ChannelOutbound that carries the reply's envelope id, the same on every retry
 * of one reply (the webhook kind signs with it as `webhook-id`). Reserved: no kind puts it in an
 * inbound message's meta.
 */
export const REPLY_ID_META = 'reply_id';

/** A config refused by `check`: the message names the field and what is wrong (400 on the routes). */
export class ChannelConfigError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'ChannelConfigError';
  }
}

export interface ChannelContext {
  channelId: string;
  config: ChannelConfig;
  /**
   * Hands one inbound message to the platform: a durable publish de-duplicated by
   * `peer_message_id`. Resolves once the message is safe; an adapter acknowledges its peer only then.
   */
  deliver(message: InboundMessage): Promise<void>;
  /** Reports the adapter's state (`Connected`, or `{Error}` when the peer refuses the credentials). */
  setStatus(status: ChannelStatus): void;
  /** fetch for URLs of the channel's config: refuses private targets unless allowed (DECISIONS D9). */
  fetch: FetchLike;
  /** `[network] allow_private_targets`, for adapters that open sockets themselves (SMTP, MQTT). */
  allowPrivateTargets: boolean;
  logger: Logger;
}

export interface ChannelConnection {
  /** Sends one message to the peer (a reply, or a message the platform starts). */
  send(message: ChannelOutbound): Promise<void>;
  /** Stops receiving and closes every socket and timer; resolves when it is done. */
  close(): Promise<void>;
}

/** An HTTP request that arrived for a channel at any api node (`POST /channels/{id}/inbound`). */
export interface HttpInboundRequest {
  headers: Record<string, string | string[] | undefined>;
  /** The body exactly as received: signatures are computed over these bytes. */
  rawBody: Buffer;
  now: Date;
}

/**
 * What the api node does with it: answer the peer with `status` and `body` (e.g. Slack's
 * url_verification challenge), and deliver `messages` (possibly none). A forged, stale or
 * replayed request is `{status: 401, messages: []}` with a reason in `body`.
 */
export interface HttpInboundResult {
  status: number;
  body: unknown;
  messages: InboundMessage[];
}

/**
 * A refused inbound request in the spec's error envelope (§Errors: `{error: {category, message}}`):
 * 401 `AuthError` for a missing, forged or stale signature, 400 `ValidationError` for a malformed body.
 */
export function refusedInbound(status: 401 | 400, message: string): HttpInboundResult {
  return { status, body: { error: { category: status === 401 ? 'AuthError' : 'ValidationError', message } }, messages: [] };
}

export interface ChannelKind {
  readonly kind: string;
  /**
   * Every config field the kind reads. Any other field is refused on POST and PUT (400 naming it
   * and the closest known one), so a misspelt secret is never stored in clear.
   */
  readonly fields: readonly string[];
  /** Config fields that hold credentials: stored encrypted, always returned as the 8-bullet placeholder. */
  readonly secretFields: readonly string[];
  /**
   * Config fields that decide where the secrets go (an API base URL, an SMTP host and port, a
   * broker, a reply URL). On PUT, a secret sent as the placeholder is refused when any of them
   * changes: the stored secret never follows a new destination; the caller sends it again.
   */
  readonly destinationFields: readonly string[];
  /**
   * The dry-run construction of the spec (§Channels POST: 400 on failure): checks the config's
   * shape and values without connecting to anything; throws ChannelConfigError.
   */
  check(config: ChannelConfig): void;
  /** Starts the adapter: connects, subscribes, polls, as the protocol needs. */
  open(context: ChannelContext): Promise<ChannelConnection>;
  /**
   * Only for kinds whose peer pushes over HTTP (`slack`, `webhook`, ...): verify and parse one
   * request. Runs on whichever api node received it, with no connection open.
   */
  receiveHttp?(config: ChannelConfig, request: HttpInboundRequest): HttpInboundResult;
}
