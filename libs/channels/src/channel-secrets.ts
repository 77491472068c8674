import { SECRET_PLACEHOLDER } from '@agent-platform/contracts';
import { Errors, openValue, sealValue } from '@agent-platform/domain';
import type { ChannelConfig, ChannelKind } from './channel-kind.ts';

/**
 * Secret config fields (docs/channels.md "Secrets"): sealed with the vault key (AES-256-GCM,
 * bound to `channel:<id>:<field>`) before they are stored, opened only by the bridge holding the
 * channel and the api node checking a request, and always shown as the 8-bullet placeholder.
 */
const aad = (channelId: string, field: string): string => `channel:${channelId}:${field}`;

/** The stored form: secret fields sealed. */
export function sealSecrets(key: Buffer, channelId: string, secretFields: readonly string[], config: ChannelConfig): ChannelConfig {
  const out: ChannelConfig = { ...config };
  for (const field of secretFields) {
    const value = out[field];
    if (typeof value === 'string') out[field] = sealValue(key, aad(channelId, field), value);
  }
  return out;
}

/** The plaintext form (bridge, checks). */
export function openSecrets(key: Buffer, channelId: string, secretFields: readonly string[], stored: ChannelConfig): ChannelConfig {
  const out: ChannelConfig = { ...stored };
  for (const field of secretFields) {
    const value = out[field];
    if (typeof value === 'string') out[field] = openValue(key, aad(channelId, field), value);
  }
  return out;
}

/** What responses show: every present secret field is the placeholder. */
export function redactSecrets(secretFields: readonly string[], config: ChannelConfig): ChannelConfig {
  const out: ChannelConfig = { ...config };
  for (const field of secretFields) if (out[field] !== undefined && out[field] !== null) out[field] = SECRET_PLACEHOLDER;
  return out;
}

/**
 * A PUT's config in plaintext: a secret field sent as the placeholder keeps the stored value
 * (spec §Channels PUT), any other value replaces it. The placeholder with nothing stored is a 400,
 * and so is the placeholder while a field that decides where the secrets go (the kind's
 * `destinationFields`) changes: a stored secret never follows a new destination (an operator
 * pointing a channel at their own host would receive it), the caller sends it again.
 */
export function mergePlaceholders(
  kind: Pick<ChannelKind, 'secretFields' | 'destinationFields'>,
  sent: ChannelConfig,
  storedPlain: ChannelConfig | null,
): ChannelConfig {
  const out: ChannelConfig = { ...sent };
  const kept = kind.secretFields.filter((field) => out[field] === SECRET_PLACEHOLDER);
  for (const field of kept) {
    const value = storedPlain?.[field];
    if (typeof value !== 'string')
      throw Errors.validation(`config.${field} is the redaction placeholder but no value is stored to keep; send the secret itself`, { field: `config.${field}` });
    out[field] = value;
  }
  const moved = kind.destinationFields.filter((field) => comparable(sent[field]) !== comparable(storedPlain?.[field]));
  if (kept.length > 0 && moved.length > 0) {
    const names = kept.map((field) => `config.${field}`);
    throw Errors.validation(
      `${names.join(' and ')} ${kept.length === 1 ? 'is' : 'are'} the redaction placeholder, but ${moved.map((f) => `config.${f}`).join(' and ')} changed: ` +
        `a stored secret is never sent to a new destination; send ${kept.join(' and ')} again with it`,
      { field: names[0], fields: names, changed: moved.map((f) => `config.${f}`) },
    );
  }
  return out;
}

/** A config value as compared across a PUT: absent, null and '' are one (the kinds read them alike). */
const comparable = (value: unknown): string => (value === undefined || value === null || value === '' ? '' : JSON.stringify(value));

/** Opens a stored channel's config with the vault key (the bridge's `openConfig`). */
export function channelConfigOpener(key: Buffer, kinds: { get(kind: string): { secretFields: readonly string[] } | undefined }) {
  return (record: { id: string; kind: string; config: ChannelConfig }): ChannelConfig =>
    openSecrets(key, record.id, kinds.get(record.kind)?.secretFields ?? [], record.config);
}
