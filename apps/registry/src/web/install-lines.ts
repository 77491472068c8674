import type { RegistryPackage } from '@agent-platform/contracts';

/**
 * How a person installs the package on a platform (docs/catalog.md "Installing by name"): the
 * `POST /catalog/install` body, and the same as a curl command. The platform's CLI has no install
 * command, so there is no CLI line. The constraint is `^<latest>`: what new resolution picks now,
 * and its compatible updates. Null when every version is yanked (no constraint picks one).
 */
export function installLines(pkg: Pick<RegistryPackage, 'name' | 'latest'>): { request: string; curl: string } | null {
  if (pkg.latest === null) return null;
  const body = JSON.stringify({ name: pkg.name, version: `^${pkg.latest}` });
  return {
    request: `POST /catalog/install\n${body}`,
    curl: `curl -s -X POST "$AP/catalog/install" -H "authorization: Bearer $AP_KEY" \\\n  -H 'content-type: application/json' -d '${body}'`,
  };
}
