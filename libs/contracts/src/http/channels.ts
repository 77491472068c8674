import { Type, type Static } from 'typebox';

/**
 * HTTP bodies of spec §Resources "Channel", §Endpoints "Channels" and the transcript routes
 * (beyond the spec; docs/channels.md). Wire names are the spec's.
 */

/**
 * A channel id: it names bus subjects (`channels.send.<id>`) and store rows, so it is restricted
 * to lower-case letters, digits, `_` and `-`, starting with a letter or digit, at most 64.
 */
export const CHANNEL_ID_PATTERN = '^[a-z0-9][a-z0-9_-]{0,63}$';

/** The redaction placeholder of secret config fields (spec: a string of 8 bullet characters). */
export const SECRET_PLACEHOLDER = '\u2022'.repeat(8);

export const ChannelStatusView = Type.Union(
  [
    Type.Literal('Connected'),
    Type.Literal('Disabled'),
    Type.Literal('NotConfigured'),
    Type.Object({ Error: Type.String() }, { additionalProperties: false }),
  ],
  { description: '`Connected`, `Disabled`, `NotConfigured`, or `{Error: <message>}` (docs/channels.md "Status").' },
);
export type ChannelStatusView = Static<typeof ChannelStatusView>;

/** spec §Resources "Channel (ChannelDetail)". */
export const ChannelDetail = Type.Object({
  id: Type.String(),
  kind: Type.String(),
  status: ChannelStatusView,
  enabled: Type.Boolean(),
  default_agent: Type.Union([Type.String(), Type.Null()]),
  default_workflow: Type.Union([Type.String(), Type.Null()]),
  config: Type.Record(Type.String(), Type.Unknown(), { description: 'Adapter-specific; secret fields are always the 8-bullet placeholder.' }),
});
export type ChannelDetail = Static<typeof ChannelDetail>;

export const ChannelList = Type.Object({ channels: Type.Array(ChannelDetail) });
export const ChannelKindList = Type.Object({ kinds: Type.Array(Type.String()) });

const ChannelFields = {
  config: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  enabled: Type.Optional(Type.Boolean()),
  default_agent: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'UUID of an installed agent.' })),
  default_workflow: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'Id of an existing workflow.' })),
};

export const ChannelCreateBody = Type.Object({ id: Type.String(), kind: Type.String(), ...ChannelFields }, { additionalProperties: false });
export type ChannelCreateBody = Static<typeof ChannelCreateBody>;

/** PUT: full replace of `config`, `enabled`, `default_agent`, `default_workflow`; `kind` may be sent only unchanged. */
export const ChannelUpdateBody = Type.Object({ kind: Type.Optional(Type.String()), id: Type.Optional(Type.String()), ...ChannelFields }, { additionalProperties: false });
export type ChannelUpdateBody = Static<typeof ChannelUpdateBody>;

export const ChannelIdParams = Type.Object({ id: Type.String() });
export const ChannelEnableBody = Type.Object({ enabled: Type.Optional(Type.Boolean()) }, { additionalProperties: false });
export const ChannelEnableResult = Type.Object({
  status: Type.Union([Type.Literal('enabled'), Type.Literal('disabled')]),
  channel: Type.String(),
});

/** One (channel, conversation) transcript of an agent (GET /agents/{id}/transcripts; beyond the spec). */
export const TranscriptSummary = Type.Object({
  channel_id: Type.String(),
  conversation: Type.String(),
  turns: Type.Integer({ minimum: 0 }),
  last_at: Type.String(),
});
export const TranscriptList = Type.Object({ transcripts: Type.Array(TranscriptSummary) });
export const TranscriptTurn = Type.Object({
  role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]),
  content: Type.String(),
  at: Type.String(),
});
export const TranscriptView = Type.Object({
  channel_id: Type.String(),
  conversation: Type.String(),
  turns: Type.Array(TranscriptTurn),
});
export const TranscriptParams = Type.Object({ id: Type.String({ format: 'uuid' }), channel_id: Type.String() });
export const TranscriptQuery = Type.Object({ conversation: Type.String({ minLength: 1 }) });
