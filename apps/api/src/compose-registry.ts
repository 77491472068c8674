import type { PlatformConfig } from '@agent-platform/contracts';
import type { RegistryAccess } from '@agent-platform/domain';
import { createHttpRegistryClient, createRegistryTrust } from '@agent-platform/registry-core';

type CatalogConfig = PlatformConfig['catalog'];

/**
 * `[catalog]` as the catalog's registry (docs/catalog.md "Installing by name"): the HTTP client
 * of `registry_url` with the bearer of `registry_key_env` (read from the environment main.ts
 * passed down, per call) and the verifier of `trusted_keys`. Rebuilt when a config reload swaps
 * the section; null while `registry_url` is empty. The registry URL is operator configuration,
 * trusted like provider URLs (DECISIONS D9): a registry on a private address is reachable.
 */
export function registryAccessOf(
  catalog: () => CatalogConfig,
  env: Record<string, string | undefined>,
): () => RegistryAccess | null {
  let from: CatalogConfig | null = null;
  let access: RegistryAccess | null = null;
  return () => {
    const current = catalog();
    if (from !== current) {
      access = build(current, env);
      from = current;
    }
    return access;
  };
}

function build(catalog: CatalogConfig, env: Record<string, string | undefined>): RegistryAccess | null {
  if (catalog.registry_url === '') return null;
  const keyEnv = catalog.registry_key_env;
  return {
    source: createHttpRegistryClient({
      url: catalog.registry_url,
      timeoutMs: catalog.request_timeout_ms,
      timeoutSetting: '[catalog] request_timeout_ms',
      ...(keyEnv === undefined ? {} : { token: () => env[keyEnv] }),
    }),
    trust: createRegistryTrust(catalog.trusted_keys),
  };
}
