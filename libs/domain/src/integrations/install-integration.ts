import { isAbsolute } from 'node:path';
import type { CatalogService } from '../catalog/catalog-service.ts';
import type { PackageSource } from '../catalog/package-source.ts';
import { Errors } from '../errors/errors.ts';
import type { Vault } from '../vault/vault.ts';

/** Where an integration's `key` is kept: one vault entry per integration (listed by name in GET /vault, never its value). */
export const integrationKeyName = (integrationId: string): string => `integration.${integrationId}.key`;

/** The longest `key` accepted: a credential, not a document. */
const MAX_KEY_CHARS = 8192;

/**
 * POST /integrations/install: the package at `path` must be an integration package (checked
 * before anything is written); it goes through the catalog like any install (dependencies
 * first, all or nothing). A `key` is validated first and stored in the vault after the install;
 * an install without `key` keeps a key stored earlier. Returns the integration id.
 */
export async function installIntegration(
  deps: { catalog: CatalogService; source: PackageSource; vault: Vault },
  request: { path: string; key?: string },
): Promise<string> {
  const { path, key } = request;
  if (!isAbsolute(path))
    throw Errors.validation(
      `name must be the absolute path of an integration package directory (got ${JSON.stringify(path.slice(0, 200))})`,
      {
        field: 'name',
      },
    );
  if (key !== undefined && (key.length === 0 || key.length > MAX_KEY_CHARS))
    throw Errors.validation(`key must be 1-${MAX_KEY_CHARS} characters`, { field: 'key' });
  if (key !== undefined && /[\0\r\n]/.test(key))
    throw Errors.validation(
      'key must not contain NUL or line breaks (it is handed over as an environment variable or header)',
      { field: 'key' },
    );
  const pkg = await deps.source.load(path);
  if (pkg === null) throw Errors.validation(`no package directory at ${path}`, { field: 'name', path });
  const { type, name } = pkg.manifest.package;
  if (type !== 'integration')
    throw Errors.validation(
      `${path} holds the ${type} package ${name}, not an integration; install it with POST /catalog/install`,
      {
        field: 'name',
        path,
        type,
      },
    );
  // The route took IntegrationInstall already (admin).
  await deps.catalog.install({ path, integrationsFromPath: true });
  if (key !== undefined) await deps.vault.put(integrationKeyName(name), key);
  return name;
}
