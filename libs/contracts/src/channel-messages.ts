import { Type, type Static } from 'typebox';

/**
 * Bus messages of the channel bridge (issue 11, docs/channels.md). Inbound messages travel on the
 * durable `Streams.channelInbound` with envelope id `<channel id>:<peer message id>` (the peer's own
 * id: Slack event id, Telegram update id, email Message-ID...), so a redelivered event is one
 * message; replies travel on `Streams.channelOutbound` and reach the bridge that holds the channel
 * through `Subjects.channelSend(<channel id>)`.
 */
export const ChannelInbound = Type.Object({
  channel_id: Type.String({ minLength: 1 }),
  kind: Type.String({ minLength: 1 }),
  /** The peer's id of this message: the de-duplication key. */
  peer_message_id: Type.String({ minLength: 1 }),
  /** Where a reply goes and whose transcript this is: Slack channel, Telegram chat, sender address, topic... */
  conversation: Type.String({ minLength: 1 }),
  /** The thread inside the conversation when the protocol has one (Slack thread_ts, email Message-ID). */
  thread: Type.Union([Type.String(), Type.Null()]),
  sender: Type.String(),
  text: Type.String(),
  received_at: Type.String(),
  /** Kind-specific details a reply needs (an email subject...). */
  meta: Type.Record(Type.String(), Type.String()),
});
export type ChannelInbound = Static<typeof ChannelInbound>;

export const ChannelOutbound = Type.Object({
  channel_id: Type.String({ minLength: 1 }),
  conversation: Type.String({ minLength: 1 }),
  thread: Type.Union([Type.String(), Type.Null()]),
  text: Type.String(),
  /** The inbound message this answers (its peer id), when it answers one. */
  in_reply_to: Type.Union([Type.String(), Type.Null()]),
  meta: Type.Record(Type.String(), Type.String()),
});
export type ChannelOutbound = Static<typeof ChannelOutbound>;
