import { AgentIdParams, ErrorEnvelope, TranscriptList, TranscriptParams, TranscriptQuery, TranscriptView } from '@agent-platform/contracts';
import { Errors } from '@agent-platform/domain';
import type { RoutePlugin } from '../api-app.ts';
import type { ApiDeps } from '../deps.ts';

/**
 * The per-(channel, conversation) transcripts of an agent (beyond the spec, docs/channels.md
 * "Transcripts"). The spec's session routes keep answering `messages: []`; these are where the
 * turns are read. Same permission as the session routes.
 */
const TAGS = ['agents'];
const ids = { id: 'agent' };

async function agentOr404(deps: ApiDeps, id: string): Promise<void> {
  if ((await deps.agents.get(id)) === null) throw Errors.notFound('agent', id);
}

export const transcriptRoutes: RoutePlugin = (app, deps) => {
  app.get(
    '/agents/:id/transcripts',
    {
      config: { action: 'SessionRead', ids },
      schema: { tags: TAGS, summary: 'Per-channel transcripts: channel, conversation, turn count, last turn', params: AgentIdParams, response: { 200: TranscriptList, 400: ErrorEnvelope, 404: ErrorEnvelope } },
    },
    async (request) => {
      await agentOr404(deps, request.params.id);
      return { transcripts: await deps.transcripts.list(request.params.id) };
    },
  );
  app.get(
    '/agents/:id/transcripts/:channel_id',
    {
      config: { action: 'SessionRead', ids },
      schema: {
        tags: TAGS,
        summary: 'The turns of one (channel, conversation) transcript',
        params: TranscriptParams,
        querystring: TranscriptQuery,
        response: { 200: TranscriptView, 400: ErrorEnvelope, 404: ErrorEnvelope },
      },
    },
    async (request) => {
      const { id, channel_id } = request.params;
      await agentOr404(deps, id);
      const turns = await deps.transcripts.get(id, channel_id, request.query.conversation);
      if (turns === null) throw Errors.notFound('transcript', `${channel_id}/${request.query.conversation}`);
      return { channel_id, conversation: request.query.conversation, turns };
    },
  );
};
