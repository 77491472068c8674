import { ErrorEnvelope, ModelList, ModelView, ProviderList } from '@agent-platform/contracts';
import { Errors } from '@agent-platform/domain';
import type { RoutePlugin } from '../api-app.ts';

const TAGS = ['models'];

/**
 * GET /providers, GET /models, GET /models/{key} (spec §Endpoints: routed, payloads ours, see
 * docs/providers.md). Read-only: providers and models are fixed by config. The key is matched
 * by a wildcard so that both `local%2Fecho` and a raw `local/echo` work, which matters for model
 * names that contain slashes (`vllm/meta-llama/Llama-3.1-8B`). No `provider:model` alias: Ollama
 * model names contain colons (`llama3:8b`).
 */
export const modelRoutes: RoutePlugin = (app, deps) => {
  app.get(
    '/providers',
    {
      config: { action: 'ProviderRead' },
      schema: { tags: TAGS, summary: 'Configured model providers (never their keys)', response: { 200: ProviderList } },
    },
    async () => ({ providers: deps.models.providers() }),
  );

  app.get(
    '/models',
    {
      config: { action: 'ProviderRead' },
      schema: { tags: TAGS, summary: 'Models by provider/model key, with the default marked', response: { 200: ModelList } },
    },
    async () => ({ models: deps.models.models() }),
  );

  app.get(
    '/models/*',
    {
      config: { action: 'ProviderRead' },
      schema: {
        tags: TAGS,
        summary: 'One model by its provider/model key',
        response: { 200: ModelView, 404: ErrorEnvelope },
      },
    },
    async (request) => {
      // The wildcard: the rest of the path, decoded by the router. No params schema: TypeBox
      // cannot compile a property named '*'.
      const key = (request.params as { '*': string })['*'];
      const model = deps.models.model(key);
      if (model === undefined) throw Errors.notFound('model', key);
      return model;
    },
  );
};
