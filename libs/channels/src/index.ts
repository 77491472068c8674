export * from './channel-kind.ts';
export { emailKind } from './kinds/email-kind.ts';
export { mqttKind } from './kinds/mqtt-kind.ts';
export { slackKind } from './kinds/slack-kind.ts';
export { telegramKind } from './kinds/telegram-kind.ts';
export { slackSignature } from './kinds/slack-signature.ts';
