// Local peers that speak the channel kinds' protocols (Slack, Telegram, SMTP, MQTT) and the
// ChannelKind conformance suite live here.
export * from './webhook-receiver.ts';
