import type { DeepPartial } from '@agent-platform/api/testing';
import { SurfacesConfig, type PlatformConfig } from '@agent-platform/contracts';

/**
 * The config the document is made under: every optional surface of the api listener on, so that
 * the document holds every route a platform can serve (`[surfaces] mcp`, `dashboard`, and any
 * surface added later: they are read from the config schema, not listed here). `registry` is not
 * an api route group but its own listener with its own document (docs/registry.md), so it stays off.
 */
export function documentConfig(): DeepPartial<PlatformConfig> {
  const surfaces = Object.fromEntries(
    Object.keys(SurfacesConfig.properties)
      .filter((name) => name !== 'registry')
      .map((name) => [name, true]),
  );
  return { auth: { mode: 'local' }, surfaces };
}
