import {
  ChannelCreateBody,
  ChannelDetail,
  ChannelEnableBody,
  ChannelEnableResult,
  ChannelIdParams,
  ChannelKindList,
  ChannelList,
  ChannelUpdateBody,
  ErrorEnvelope,
} from '@agent-platform/contracts';
import { Type } from 'typebox';
import { MANAGE_ERRORS } from '../http/error-responses.ts';
import type { ApiApp, RoutePlugin } from '../api-app.ts';
import type { ApiDeps } from '../deps.ts';

/**
 * Spec §Channels, and the same operations under the console's `/settings/channels`
 * (docs/channels.md). Reads take ChannelRead, changes ChannelManage and are audited under
 * `channels` (path and status only: never a body, so no secret). Each change notifies the
 * bridges, which restart or stop the adapter at once: no server restart.
 *
 * `POST /channels/{id}/inbound` (beyond the spec) is public: the peer (a web form, a Slack app)
 * holds no api key; it authenticates with the channel's own signature, which the kind checks
 * over the raw body before anything is delivered.
 */
const TAGS = ['channels'];
// 403 is either the role check's flat body or PermissionDenied in the envelope.
const Failures = MANAGE_ERRORS;
const manage = { action: 'ChannelManage', audit: 'channels' } as const;
const read = { action: 'ChannelRead' } as const;

function channelCrud(app: ApiApp, deps: ApiDeps, base: '/channels' | '/settings/channels'): void {
  const alias = base === '/channels' ? '' : ' (console alias)';
  app.get(`${base}/kinds`, { config: read, schema: { tags: TAGS, summary: `Channel kinds${alias}`, response: { 200: ChannelKindList } } }, async () => ({
    kinds: deps.channels.kinds(),
  }));
  app.get(`${base}`, { config: read, schema: { tags: TAGS, summary: `Every channel${alias}`, response: { 200: ChannelList } } }, async () => ({
    channels: await deps.channels.list(),
  }));
  app.post(
    `${base}`,
    { config: manage, schema: { tags: TAGS, summary: `Create a channel${alias}`, body: ChannelCreateBody, response: { 201: ChannelDetail, ...Failures } } },
    async (request, reply) => reply.code(201).send(await deps.channels.create(request.body)),
  );
  app.get(
    `${base}/:id`,
    { config: read, schema: { tags: TAGS, summary: `One channel${alias}`, params: ChannelIdParams, response: { 200: ChannelDetail, 404: ErrorEnvelope } } },
    async (request) => deps.channels.get(request.params.id),
  );
  app.put(
    `${base}/:id`,
    {
      config: manage,
      schema: {
        tags: TAGS,
        summary: `Replace config, enabled and defaults; the adapter restarts${alias}`,
        params: ChannelIdParams,
        body: ChannelUpdateBody,
        response: { 200: ChannelDetail, ...Failures },
      },
    },
    async (request) => deps.channels.update(request.params.id, request.body),
  );
  app.delete(
    `${base}/:id`,
    {
      config: manage,
      schema: { tags: TAGS, summary: `Delete; the adapter stops${alias}`, params: ChannelIdParams, response: { 204: Type.Null({ description: 'Removed.' }), ...Failures } },
    },
    async (request, reply) => {
      await deps.channels.remove(request.params.id);
      return reply.code(204).send(null);
    },
  );
  for (const verb of ['enable', 'disable'] as const) {
    app.post(
      `${base}/:id/${verb}`,
      { config: manage, schema: { tags: TAGS, summary: `${verb === 'enable' ? 'Start' : 'Stop'} the adapter${alias}`, params: ChannelIdParams, response: { 200: ChannelEnableResult, ...Failures } } },
      async (request) => {
        await deps.channels.setEnabled(request.params.id, verb === 'enable');
        return { status: verb === 'enable' ? ('enabled' as const) : ('disabled' as const), channel: request.params.id };
      },
    );
  }
}

const Answer = Type.Unknown({ description: "The kind's answer to the peer (e.g. `{status: accepted, id}`)." });

export const channelRoutes: RoutePlugin = async (app, deps) => {
  channelCrud(app, deps, '/channels');
  channelCrud(app, deps, '/settings/channels');
  app.put(
    '/settings/channels/:id/enable',
    {
      config: manage,
      schema: { tags: TAGS, summary: 'Enable or disable (console)', params: ChannelIdParams, body: ChannelEnableBody, response: { 200: ChannelEnableResult, ...Failures } },
    },
    async (request) => {
      const enabled = request.body?.enabled ?? true;
      await deps.channels.setEnabled(request.params.id, enabled);
      return { status: enabled ? ('enabled' as const) : ('disabled' as const), channel: request.params.id };
    },
  );

  // Its own scope: the body is kept as raw bytes (the signature covers them), whatever its type.
  await app.register(async (plain) => {
    const scope = plain as ApiApp;
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    scope.post(
      '/channels/:id/inbound',
      {
        // Never audited, accepted or refused: anyone can call it, and the trail is append-only.
        // Accepted messages are recorded in channel_messages; refusals in the log (docs/channels.md).
        config: { action: 'public', audit: false },
        schema: {
          tags: TAGS,
          summary: "A peer pushes messages to a channel; authenticated by the channel's signature, no api key",
          params: ChannelIdParams,
          response: { 200: Answer, 202: Answer, 400: Answer, 401: Answer, 404: ErrorEnvelope, 409: ErrorEnvelope, 500: ErrorEnvelope },
        },
      },
      async (request, reply) => {
        const rawBody = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const answer = await deps.channels.receiveHttp(request.params.id, { headers: request.headers, rawBody, now: deps.clock.now() });
        // The kind picks the status (202 accepted, 401 forged or replayed, 400 malformed, 200 a handshake).
        return reply.code(answer.status as 200).send(answer.body);
      },
    );
  });
};
