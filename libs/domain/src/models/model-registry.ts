import { Errors } from '../errors/errors.ts';
import type { ModelProvider, ProviderKind } from './model-provider.ts';

/** What GET /providers shows of a provider: never its key or the name of its key variable. */
export interface ProviderInfo {
  id: string;
  kind: ProviderKind;
  models: string[];
  base_url?: string;
}

/** One model, addressed by its `provider/model` key (the form of `[models] default`). */
export interface ModelInfo {
  key: string;
  provider: string;
  model: string;
  default: boolean;
}

export interface ResolvedModel {
  key: string;
  provider: ModelProvider;
  /** The model name to put in the provider's request. */
  model: string;
}

/**
 * The providers of the running config and the model every agent uses (DECISIONS D6: agents carry
 * no model). Providers and models come from boot config only; nothing here writes.
 */
export interface ModelRegistry {
  providers(): ProviderInfo[];
  /** Every listed model of every provider, plus the default when its provider lists none. */
  models(): ModelInfo[];
  /** The model a key names, or undefined (unknown provider, or a model it does not offer). */
  model(key: string): ModelInfo | undefined;
  /** `[models] default`, e.g. `local/echo`. */
  defaultKey(): string;
  /** The provider and model for a key (default: `defaultKey()`); NotFound when there is none. */
  resolve(key?: string): ResolvedModel;
}

/**
 * Splits `provider/model` at the FIRST slash: provider ids hold no slash, model names may
 * (`meta-llama/Llama-3.1-8B` on vLLM) and may hold colons (`llama3:8b` on Ollama).
 */
export function parseModelKey(key: string): { provider: string; model: string } | null {
  const slash = key.indexOf('/');
  if (slash <= 0 || slash === key.length - 1) return null;
  return { provider: key.slice(0, slash), model: key.slice(slash + 1) };
}

/** Pure: a registry over already-built providers. A provider that lists no models accepts any name. */
export function createModelRegistry(options: { providers: readonly ModelProvider[]; defaultKey: string }): ModelRegistry {
  const byId = new Map<string, ModelProvider>();
  for (const provider of options.providers) {
    if (byId.has(provider.id)) throw new Error(`duplicate model provider id '${provider.id}'`);
    byId.set(provider.id, provider);
  }
  const defaultKey = options.defaultKey;

  const model = (key: string): ModelInfo | undefined => {
    const parsed = parseModelKey(key);
    const provider = parsed === null ? undefined : byId.get(parsed.provider);
    if (parsed === null || provider === undefined) return undefined;
    const offered = provider.models();
    if (offered.length > 0 && !offered.includes(parsed.model)) return undefined;
    return { key, provider: parsed.provider, model: parsed.model, default: key === defaultKey };
  };

  return {
    providers: () =>
      [...byId.values()].map((p) => ({
        id: p.id,
        kind: p.kind,
        models: p.models(),
        ...(p.base_url === undefined ? {} : { base_url: p.base_url }),
      })),
    models: () => {
      const keys = [...byId.values()].flatMap((p) => p.models().map((m) => `${p.id}/${m}`));
      if (!keys.includes(defaultKey)) keys.push(defaultKey);
      return keys.map(model).filter((m): m is ModelInfo => m !== undefined);
    },
    model,
    defaultKey: () => defaultKey,
    resolve: (key = defaultKey) => {
      const info = model(key);
      const provider = info === undefined ? undefined : byId.get(info.provider);
      if (info === undefined || provider === undefined) throw Errors.notFound('model', key);
      return { key, provider, model: info.model };
    },
  };
}
