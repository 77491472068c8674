import { didYouMean } from '@agent-platform/contracts';
import type { ChannelKind } from './channel-kind.ts';
import { emailKind } from './kinds/email-kind.ts';
import { mqttKind } from './kinds/mqtt-kind.ts';
import { slackKind } from './kinds/slack-kind.ts';
import { telegramKind } from './kinds/telegram-kind.ts';
import { webhookKind } from './kinds/webhook-kind.ts';

/**
 * The kinds the platform can construct: what `GET /channels/kinds` lists and what POST /channels
 * accepts. One entry per adapter (STYLE §1); a new kind is added here.
 */
export const CHANNEL_KINDS: readonly ChannelKind[] = [emailKind, mqttKind, slackKind, telegramKind, webhookKind];

/** A set of kinds looked up by name (the routes, the bridge and the tests use the same one). */
export interface ChannelKinds {
  names(): string[];
  get(kind: string): ChannelKind | undefined;
  /** The message of a 400 for an unknown kind: lists the kinds and suggests the closest. */
  unknownMessage(kind: string): string;
}

export function createChannelKinds(kinds: readonly ChannelKind[] = CHANNEL_KINDS): ChannelKinds {
  const byName = new Map(kinds.map((k) => [k.kind, k]));
  return {
    names: () => [...byName.keys()].sort(),
    get: (kind) => byName.get(kind),
    unknownMessage: (kind) =>
      `unknown channel kind '${kind.slice(0, 64)}'${didYouMean(kind, [...byName.keys()])}; kinds: ${[...byName.keys()].sort().join(', ')}`,
  };
}
