// Local peers that speak the channel kinds' protocols (Slack, Telegram, SMTP, MQTT) and the
// ChannelKind conformance suite every kind passes.
export { channelKindConformance } from './channel-kind-conformance.ts';
export type {
  ConformanceEnv,
  ConformanceHarness,
  PeerReceived,
  PeerSent,
} from './channel-kind-conformance.ts';
export { startSlackPeer, signSlackRequest, postSlackEvent, slackMessageEvent } from './slack-peer.ts';
export type { SlackMessageInput, SlackPeer, SlackPost, SignOptions } from './slack-peer.ts';
export { startTelegramPeer } from './telegram-peer.ts';
export type { TelegramMessageInput, TelegramPeer, TelegramSent, TelegramUpdate } from './telegram-peer.ts';
export { startSmtpPeer, sendMail } from './smtp-peer.ts';
export type { MailInput, ReceivedMail, SmtpPeer } from './smtp-peer.ts';
export { startMosquitto, connectMqttTestClient } from './mosquitto.ts';
export type { MosquittoHandle, MqttTestClient } from './mosquitto.ts';
// ChannelKind conformance suite live here.
export * from './webhook-peer.ts';
