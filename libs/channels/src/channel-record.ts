import type { ChannelStatusView } from '@agent-platform/contracts';
import type { Collection, Store } from '@agent-platform/store';

/**
 * A channel as stored (collection `channels`, id = the operator's channel id). Secret config
 * fields (the kind's `secretFields`) hold the vault-sealed value, never plaintext; `revision`
 * grows on every change so the bridge holding the channel knows to restart its adapter.
 */
export interface ChannelRecord {
  id: string;
  kind: string;
  enabled: boolean;
  default_agent: string | null;
  default_workflow: string | null;
  config: Record<string, unknown>;
  revision: number;
  created_at: string;
  updated_at: string;
}

/**
 * The lease of one enabled channel (collection `channel_leases`, id = channel id): the bridge
 * `holder` runs its adapter until `expires_at` unless it renews; `fence` grows with each new
 * holder, so a bridge that lost the lease while paused cannot renew it back. The holder also
 * writes its adapter's `status` here; a row past `expires_at` is stale and means nobody runs it.
 */
export interface ChannelLease {
  id: string;
  holder: string;
  fence: number;
  expires_at: string;
  /** The adapter's state as the holder last reported it; null while it is still opening. */
  status: Exclude<ChannelStatusView, 'Disabled' | 'NotConfigured'> | null;
  /** The channel revision the holder's adapter runs. */
  revision: number;
}

/** One inbound message as the router handled it (collection `channel_messages`, id = envelope id). */
export interface ChannelMessageRecord {
  id: string;
  channel_id: string;
  conversation: string;
  /**
   * `received`: being handled; `answered` (the reply is on the bus), `started` (a workflow run; it
   * becomes `answered` once the run ended and its reply went out), `dropped` (no default), `failed`.
   */
  state: 'received' | 'answered' | 'started' | 'dropped' | 'failed';
  run_id?: string;
  detail?: string;
  at: string;
  /** Rows are kept for a week (docs/channels.md). */
  expires_at: string;
}

/**
 * A reply a bridge handed to its peer (collection `channel_replies`, id = the reply's envelope id):
 * the same reply published again after the bus forgot its id (a redelivery past the duplicate
 * window, a second look at an ended run) is not sent twice. Kept a week, as the message rows.
 */
export interface ChannelReplyRecord {
  id: string;
  channel_id: string;
  sent_at: string;
  expires_at: string;
}

export const CHANNELS_COLLECTION = 'channels';
/** How long message and reply rows are kept: far longer than any redelivery (docs/channels.md). */
export const CHANNEL_RECORD_TTL_MS = 7 * 24 * 3600_000;

export function channelCollections(store: Store): {
  channels: Collection<ChannelRecord>;
  leases: Collection<ChannelLease>;
  messages: Collection<ChannelMessageRecord>;
  replies: Collection<ChannelReplyRecord>;
} {
  return {
    channels: store.collection<ChannelRecord>(CHANNELS_COLLECTION, { indexes: [{ field: 'enabled' }] }),
    leases: store.collection<ChannelLease>('channel_leases'),
    messages: store.collection<ChannelMessageRecord>('channel_messages', { ttlField: 'expires_at', indexes: [{ field: 'channel_id' }, { field: 'state' }] }),
    replies: store.collection<ChannelReplyRecord>('channel_replies', { ttlField: 'expires_at' }),
  };
}

/** The status a user sees (docs/channels.md "Status"). */
export function channelStatus(record: ChannelRecord, lease: ChannelLease | null, now: Date): ChannelStatusView {
  if (!record.enabled) return 'Disabled';
  if (lease === null || lease.expires_at <= now.toISOString() || lease.status === null) return 'NotConfigured';
  return lease.status;
}
