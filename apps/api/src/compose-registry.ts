import type { PlatformConfig } from '@agent-platform/contracts';
import type { RegistryAccess } from '@agent-platform/domain';
import {
  createHttpRegistryClient,
  createRegistryTrust,
  type HttpRegistryClient,
} from '@agent-platform/registry-core';

type CatalogConfig = PlatformConfig['catalog'];

/**
 * `[catalog]` as the platform's registry client (docs/catalog.md "Installing by name"): the one
 * HTTP path to `registry_url`, used by install by name, search and the revocation watcher, with
 * the bearer of `registry_key_env` (read from the environment main.ts passed down, per call) and
 * `request_timeout_ms`. Rebuilt when a config reload swaps the section; null while `registry_url`
 * is empty. The registry URL is operator configuration, trusted like provider URLs (DECISIONS
 * D9): a registry on a private address is reachable.
 */
export function registryClientOf(
  catalog: () => CatalogConfig,
  env: Record<string, string | undefined>,
): () => HttpRegistryClient | null {
  return memoOnSection(catalog, (current) => {
    if (current.registry_url === '') return null;
    const keyEnv = current.registry_key_env;
    return createHttpRegistryClient({
      url: current.registry_url,
      timeoutMs: current.request_timeout_ms,
      timeoutSetting: '[catalog] request_timeout_ms',
      ...(keyEnv === undefined ? {} : { token: () => env[keyEnv] }),
    });
  });
}

/** The catalog's registry: the client of `registryClientOf` and the verifier of `trusted_keys`. */
export function registryAccessOf(
  catalog: () => CatalogConfig,
  env: Record<string, string | undefined>,
): () => RegistryAccess | null {
  const client = registryClientOf(catalog, env);
  return memoOnSection(catalog, (current) => {
    const source = client();
    return source === null ? null : { source, trust: createRegistryTrust(current.trusted_keys) };
  });
}

/** `build` of the current section, built again only when a reload replaced the section. */
function memoOnSection<T>(catalog: () => CatalogConfig, build: (current: CatalogConfig) => T): () => T {
  let memo: { from: CatalogConfig; value: T } | null = null;
  return () => {
    const current = catalog();
    if (memo === null || memo.from !== current) memo = { from: current, value: build(current) };
    return memo.value;
  };
}
