import { parseArgs } from 'node:util';
import type { RegistryDownloads, RegistryPackage, RegistryVersion } from '@agent-platform/contracts';
import { EXIT_FAILED, EXIT_OK, type CliIo } from './command.ts';
import { alignedColumns, clientFor, PackageUsageError, registryRefused } from './package-registry-actions.ts';

export const INFO_USAGE = `  agent-platform package info <name> [--registry <url>]
      the package as its registry page shows it: description, licence and links, deprecation,
      owners, dist-tags, every version (published by, downloads, yank, provenance), downloads,
      the packages that depend on it, and the install request`;

/**
 * `package info <name>`: the registry's package page in a terminal (docs/packages.md "Publishing"),
 * from four reads made together: the package, its versions, its downloads, its dependents.
 */
export async function runInfoAction(args: readonly string[], io: CliIo): Promise<number> {
  try {
    return await info(args, io);
  } catch (error) {
    return registryRefused('info', error, io);
  }
}

async function info(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({ args: [...args], allowPositionals: true, options: { registry: { type: 'string' } } });
  const [name, ...rest] = positionals;
  if (name === undefined) throw new PackageUsageError('package info needs a package name');
  if (rest.length > 0) throw new PackageUsageError(`unexpected argument '${rest[0] ?? ''}'`);
  const client = await clientFor(values.registry, io);
  const [pkg, versions, downloads, dependents] = await Promise.all([client.package(name), client.versions(name), client.downloads(name), client.dependents(name)]);
  if (pkg === null || versions === null) {
    io.err(`agent-platform package info: ${client.url} has no package ${name}`);
    return EXIT_FAILED;
  }
  for (const line of header(pkg)) io.out(line);
  io.out('');
  for (const line of versionTable(versions, downloads)) io.out(line);
  io.out('');
  if (downloads !== null) {
    const recent = downloads.days.reduce((n, d) => n + d.downloads, 0);
    io.out(`downloads: ${downloads.total} in all, ${recent} in the last 90 days`);
  }
  const deps = dependents?.dependents ?? [];
  io.out(deps.length === 0 ? 'dependents: none' : `dependents: ${deps.map((d) => `${d.name} ${d.version} (${d.requirement})`).join(', ')}`);
  if (versions.some((v) => v.has_readme === true)) io.out(`readme: ${client.url}/packages/${encodeURIComponent(name)}/readme`);
  return EXIT_OK;
}

function header(pkg: RegistryPackage): string[] {
  const lines = [`${pkg.name} ${pkg.latest ?? '(every version yanked)'} (${pkg.type}): ${pkg.title}`, `  ${pkg.description}`];
  const links = [pkg.license === undefined ? null : `licence ${pkg.license}`, pkg.repository === undefined ? null : `repository ${pkg.repository}`, pkg.homepage === undefined ? null : `homepage ${pkg.homepage}`].filter((l) => l !== null);
  if (links.length > 0) lines.push(`  ${links.join('; ')}`);
  if (pkg.deprecated) lines.push(`  DEPRECATED: ${pkg.deprecated.message} (${pkg.deprecated.deprecated_by}, ${pkg.deprecated.deprecated_at})`);
  const invited = pkg.pending_owners ?? [];
  lines.push(`  owners: ${pkg.owners.join(', ')}${invited.length === 0 ? '' : `; invited: ${invited.map((p) => p.owner).join(', ')}`}`);
  const tags = Object.entries(pkg.dist_tags ?? {});
  if (tags.length > 0) lines.push(`  tags: ${tags.map(([tag, version]) => `${tag} ${version}`).join(', ')}`);
  // The request the registry's web page shows (docs/catalog.md "Installing by name"): the platform's CLI installs nothing.
  if (pkg.latest !== null) lines.push(`  install: POST /catalog/install ${JSON.stringify({ name: pkg.name, version: `^${pkg.latest}` })}`);
  return lines;
}

/** VERSION, PUBLISHED, BY, DOWNLOADS in aligned columns, then what else there is to say of the version. */
function versionTable(versions: readonly RegistryVersion[], downloads: RegistryDownloads | null): string[] {
  const counts = new Map((downloads?.versions ?? []).map((v) => [v.version, v.downloads]));
  return alignedColumns([
    ['VERSION', 'PUBLISHED', 'BY', 'DOWNLOADS', 'NOTES'],
    ...versions.map((v) => [v.version, v.published_at, v.published_by, String(counts.get(v.version) ?? 0), notes(v)]),
  ]);
}

function notes(v: RegistryVersion): string {
  const out: string[] = [];
  if (v.yank !== null) out.push(`yanked${v.yank.security ? ' (security)' : ''}: ${v.yank.reason}`);
  if (v.provenance) {
    const claims = Object.entries(v.provenance.claims).map(([k, value]) => `${k}=${value}`).join(' ');
    out.push(`provenance ${v.provenance.identity}${claims === '' ? '' : ` (${claims})`}`);
  }
  return out.join('; ');
}
