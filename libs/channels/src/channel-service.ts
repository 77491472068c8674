import { randomUUID } from 'node:crypto';
import {
  CHANNEL_ID_PATTERN,
  closestName,
  Streams,
  Subjects,
  type ChannelCreateBody,
  type ChannelDetail,
  type ChannelInbound,
  type ChannelUpdateBody,
} from '@agent-platform/contracts';
import type { Bus } from '@agent-platform/bus';
import { Errors, type Clock } from '@agent-platform/domain';
import { StoreDuplicateError, type Store } from '@agent-platform/store';
import { ChannelConfigError, type ChannelConfig, type ChannelKind, type HttpInboundRequest, type InboundMessage } from './channel-kind.ts';
import type { ChannelKinds } from './channel-kinds.ts';
import { channelCollections, channelStatus, type ChannelRecord } from './channel-record.ts';
import { mergePlaceholders, openSecrets, redactSecrets, sealSecrets } from './channel-secrets.ts';

const ID_RE = new RegExp(CHANNEL_ID_PATTERN);
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The notification of `Subjects.channelChanged`. */
export interface ChannelChangedMessage {
  channel_id: string;
}

export interface ChannelServiceDeps {
  store: Store;
  bus: Bus;
  clock: Clock;
  kinds: ChannelKinds;
  /** The vault key: secret config fields are sealed with it. */
  vaultKey: Buffer;
  /** Whether an agent with this UUID is installed (`default_agent`). */
  agentExists: (id: string) => Promise<boolean>;
  /** Whether a workflow with this id exists (`default_workflow`). */
  workflowExists: (id: string) => Promise<boolean>;
}

/** What the api node answers the peer of `POST /channels/{id}/inbound`. */
export interface InboundAnswer {
  status: number;
  body: unknown;
  delivered: number;
}

/** Spec §Channels (docs/channels.md): records, secrets, status, and the inbound HTTP route. */
export interface ChannelService {
  kinds(): string[];
  list(): Promise<ChannelDetail[]>;
  get(id: string): Promise<ChannelDetail>;
  create(body: ChannelCreateBody): Promise<ChannelDetail>;
  update(id: string, body: ChannelUpdateBody): Promise<ChannelDetail>;
  remove(id: string): Promise<void>;
  setEnabled(id: string, enabled: boolean): Promise<void>;
  receiveHttp(id: string, request: HttpInboundRequest): Promise<InboundAnswer>;
  /** A stored channel's config with its secrets opened (for a bridge in this process). */
  openConfig(record: ChannelRecord): ChannelConfig;
}

/**
 * Hands one inbound message to the platform: a durable publish whose envelope id is
 * `<channel id>:<peer message id>`, so the same peer message delivered twice (a peer retry, two
 * api nodes, an adapter reconnecting) is one bus message and is answered once.
 */
export async function deliverInbound(bus: Bus, channel: { id: string; kind: string }, message: InboundMessage, now: Date): Promise<void> {
  const data: ChannelInbound = { ...message, channel_id: channel.id, kind: channel.kind, received_at: message.received_at ?? now.toISOString() };
  await bus.publish<ChannelInbound>(Streams.channelInbound, {
    id: `${channel.id}:${message.peer_message_id}`,
    correlation_id: randomUUID(),
    attempt: 1,
    occurred_at: now.toISOString(),
    data,
  });
}

/**
 * A field the kind does not read is refused (400 naming it and the closest known field), never
 * stored: a misspelt secret (`token` for `bot_token`) would be kept and shown in clear.
 */
function refuseUnknownFields(kind: ChannelKind, config: ChannelConfig): void {
  for (const field of Object.keys(config)) {
    if (kind.fields.includes(field)) continue;
    const shown = field.slice(0, 64);
    const closest = closestName(field, kind.fields);
    throw Errors.validation(
      `unknown field \`${shown}\` in ${kind.kind} config; ${closest === null ? `its fields are ${kind.fields.join(', ')}` : `did you mean \`${closest}\`?`}`,
      { field: `config.${shown}` },
    );
  }
}

export function createChannelService(deps: ChannelServiceDeps): ChannelService {
  const { channels, leases } = channelCollections(deps.store);
  const now = (): Date => deps.clock.now();

  const kindOf = (name: string): ChannelKind => {
    const kind = deps.kinds.get(name);
    if (kind === undefined) throw Errors.validation(deps.kinds.unknownMessage(name), { field: 'kind', kinds: deps.kinds.names() });
    return kind;
  };
  const recordOf = async (id: string): Promise<ChannelRecord> => {
    const found = await channels.get(id);
    if (found === null) throw Errors.notFound('channel', id);
    return found.doc;
  };
  const view = async (record: ChannelRecord): Promise<ChannelDetail> => {
    const lease = (await leases.get(record.id))?.doc ?? null;
    return {
      id: record.id,
      kind: record.kind,
      status: channelStatus(record, lease, now()),
      enabled: record.enabled,
      default_agent: record.default_agent,
      default_workflow: record.default_workflow,
      config: redactSecrets(deps.kinds.get(record.kind)?.secretFields ?? [], record.config),
    };
  };
  const changed = async (id: string): Promise<void> => {
    // A lost notification only delays the bridges until their next look (about a second).
    await deps.bus.notify<ChannelChangedMessage>(Subjects.channelChanged, { channel_id: id }).catch(() => undefined);
  };
  const checkConfig = (kind: ChannelKind, config: ChannelConfig): void => {
    try {
      kind.check(config);
    } catch (error) {
      if (error instanceof ChannelConfigError) throw Errors.validation(`config of a ${kind.kind} channel: ${error.message}`, { field: `config.${error.field}` });
      throw error;
    }
  };
  const checkDefaults = async (body: { default_agent?: string | null | undefined; default_workflow?: string | null | undefined }): Promise<void> => {
    const agent = body.default_agent ?? null;
    if (agent !== null) {
      if (!UUID_RE.test(agent)) throw Errors.invalidId('agent', agent);
      if (!(await deps.agentExists(agent))) throw Errors.notFound('agent', agent);
    }
    const workflow = body.default_workflow ?? null;
    if (workflow !== null && !(await deps.workflowExists(workflow))) throw Errors.notFound('workflow', workflow);
  };

  return {
    kinds: () => deps.kinds.names(),
    async list() {
      const rows = await channels.find({ orderBy: { field: 'id' } });
      return Promise.all(rows.map(({ doc }) => view(doc)));
    },
    get: async (id) => view(await recordOf(id)),

    async create(body) {
      if (!ID_RE.test(body.id))
        throw Errors.validation(`invalid channel id '${body.id.slice(0, 80)}': use 1 to 64 lower-case letters, digits, '_' or '-', starting with a letter or digit`, { field: 'id' });
      const kind = kindOf(body.kind);
      const config = body.config ?? {};
      refuseUnknownFields(kind, config);
      mergePlaceholders(kind, config, null);
      checkConfig(kind, config);
      await checkDefaults(body);
      if ((await channels.get(body.id)) !== null) throw Errors.conflict(`channel '${body.id}' already exists`, { id: body.id });
      const at = now().toISOString();
      const record: ChannelRecord = {
        id: body.id,
        kind: kind.kind,
        enabled: body.enabled ?? true,
        default_agent: body.default_agent ?? null,
        default_workflow: body.default_workflow ?? null,
        config: sealSecrets(deps.vaultKey, body.id, kind.secretFields, config),
        revision: 1,
        created_at: at,
        updated_at: at,
      };
      try {
        await channels.insert(record);
      } catch (error) {
        if (error instanceof StoreDuplicateError) throw Errors.conflict(`channel '${body.id}' already exists`, { id: body.id });
        throw error;
      }
      await changed(record.id);
      return view(record);
    },

    async update(id, body) {
      const current = await recordOf(id);
      if (body.kind !== undefined && body.kind !== current.kind)
        throw Errors.validation(`the kind of channel '${id}' is '${current.kind}' and cannot change; create a new channel instead`, { field: 'kind' });
      if (body.id !== undefined && body.id !== id) throw Errors.validation(`the id of channel '${id}' cannot change`, { field: 'id' });
      const kind = kindOf(current.kind);
      const storedPlain = openSecrets(deps.vaultKey, id, kind.secretFields, current.config);
      refuseUnknownFields(kind, body.config ?? {});
      const config = mergePlaceholders(kind, body.config ?? {}, storedPlain);
      checkConfig(kind, config);
      await checkDefaults(body);
      const stored = await channels.update(id, (row) => {
        if (row === null) return null;
        return {
          ...row.doc,
          enabled: body.enabled ?? row.doc.enabled,
          default_agent: body.default_agent ?? null,
          default_workflow: body.default_workflow ?? null,
          config: sealSecrets(deps.vaultKey, id, kind.secretFields, config),
          revision: row.doc.revision + 1,
          updated_at: now().toISOString(),
        };
      });
      if (stored === null) throw Errors.notFound('channel', id);
      await changed(id);
      return view(stored.doc);
    },

    async remove(id) {
      if (!(await channels.delete(id))) throw Errors.notFound('channel', id);
      await changed(id);
    },

    async setEnabled(id, enabled) {
      const stored = await channels.update(id, (row) => {
        if (row === null || row.doc.enabled === enabled) return null;
        return { ...row.doc, enabled, revision: row.doc.revision + 1, updated_at: now().toISOString() };
      });
      if (stored === null) throw Errors.notFound('channel', id);
      await changed(id);
    },

    openConfig: (record) => openSecrets(deps.vaultKey, record.id, deps.kinds.get(record.kind)?.secretFields ?? [], record.config),

    async receiveHttp(id, request) {
      const record = (await channels.get(id))?.doc;
      if (record === undefined) throw Errors.notFound('channel', id);
      const kind = kindOf(record.kind);
      if (kind.receiveHttp === undefined)
        throw Errors.validation(`channel '${id}' is of kind '${record.kind}', which does not receive over HTTP`, { kind: record.kind });
      if (!record.enabled) throw Errors.conflict(`channel '${id}' is disabled; nothing was delivered`, { id });
      const result = kind.receiveHttp(openSecrets(deps.vaultKey, id, kind.secretFields, record.config), request);
      for (const message of result.messages) await deliverInbound(deps.bus, record, message, request.now);
      return { status: result.status, body: result.body, delivered: result.messages.length };
    },
  };
}
