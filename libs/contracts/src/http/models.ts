import { Type, type Static } from 'typebox';

/**
 * Bodies of GET /providers, GET /models and GET /models/{key} (spec §Endpoints: routed, payloads
 * not shown; ours are in docs/providers.md). Providers and models come from boot config only.
 */

export const ProviderView = Type.Object({
  id: Type.String(),
  kind: Type.Union([Type.Literal('local'), Type.Literal('openai')]),
  models: Type.Array(Type.String(), { description: 'Model names offered; empty when the config lists none (any name is passed on).' }),
  base_url: Type.Optional(Type.String({ description: 'The endpoint, without credentials; absent for the built-in provider.' })),
});
export type ProviderView = Static<typeof ProviderView>;

export const ProviderList = Type.Object({ providers: Type.Array(ProviderView) });
export type ProviderList = Static<typeof ProviderList>;

export const ModelView = Type.Object({
  key: Type.String({ description: '`provider/model`, the form of `[models] default`.' }),
  provider: Type.String(),
  model: Type.String(),
  default: Type.Boolean({ description: 'Whether this is `[models] default`, the model every agent uses.' }),
});
export type ModelView = Static<typeof ModelView>;

export const ModelList = Type.Object({ models: Type.Array(ModelView) });
export type ModelList = Static<typeof ModelList>;
