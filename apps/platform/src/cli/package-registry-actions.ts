import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { PACKAGE_TYPES, type PackageProblem, type PackageType, type RegistrySearchHit } from '@agent-platform/contracts';
import { buildPackage, formatProblem, PackageError } from '@agent-platform/packages';
import { createHttpRegistryClient, RegistryRequestError, type HttpRegistryClient } from '@agent-platform/registry-core';
import { resolveRegistry } from './cli-credentials.ts';
import { EXIT_FAILED, EXIT_OK, type CliIo } from './command.ts';

/** A command line the action cannot run: exit 2 with the usage text. */
export class PackageUsageError extends Error {}

/** What a registry call may take before the CLI gives up (a publish uploads an archive). */
const TIMEOUT_MS = 60_000;

export const REGISTRY_USAGE = `  agent-platform package publish <dir|archive.tar.gz> [--registry <url>]
      build the directory (or take the archive) and publish it; prints name, version and
      the key id of the registry's signature
  agent-platform package yank <name> <version> --reason <text> [--security] [--undo] [--registry <url>]
      yank a version (new installs skip it; --security also suspends it where it runs);
      --undo un-yanks it
  agent-platform package search [<words>] [--type <type>] [--category <path>] [--region <code>]
      [--page <n>] [--registry <url>]
      search the registry; prints a table
  agent-platform package deprecate <name> --message <text> [--undo] [--registry <url>]
      mark a package deprecated (every version still installs; the registry says so);
      --undo takes the mark off
  agent-platform package tag <name> <tag> <version> | <name> <tag> --remove [--registry <url>]
      point a dist-tag (next, beta...) at a version, or remove it; latest is always computed

The registry is --registry, else $AP_REGISTRY_URL, else the one of \`agent-platform registry login\`;
the key sent is $AP_REGISTRY_KEY, else the stored login's (only to the registry it was stored for).`;

const registryOption = { registry: { type: 'string' } } as const;

export const REGISTRY_ACTIONS = ['publish', 'yank', 'search', 'deprecate', 'tag'] as const;
export type RegistryAction = (typeof REGISTRY_ACTIONS)[number];

/** `package publish|yank|search|deprecate|tag`: the registry side of packages (docs/packages.md "Publishing"). */
export async function runRegistryAction(action: RegistryAction, args: readonly string[], io: CliIo): Promise<number> {
  try {
    if (action === 'tag') return await tag(args, io);
    if (action === 'publish') return await publish(args, io);
    if (action === 'yank') return await yank(args, io);
    if (action === 'deprecate') return await deprecate(args, io);
    return await search(args, io);
  } catch (error) {
    return registryRefused(action, error, io);
  }
}

/** A registry call that failed: exit 1 with the registry's words (and how to send a key after a 401); anything else is rethrown. */
export function registryRefused(action: string, error: unknown, io: CliIo): number {
  if (!(error instanceof RegistryRequestError)) throw error;
  io.err(`agent-platform package ${action}: ${error.message}`);
  if (error.status === 401) io.err('Run agent-platform registry login, or set AP_REGISTRY_KEY, to send a registry key.');
  return EXIT_FAILED;
}

/** The client of the registry a command names (--registry, $AP_REGISTRY_URL, the stored login), with the key to send. */
export async function clientFor(flag: string | undefined, io: CliIo): Promise<HttpRegistryClient> {
  const env = io.env ?? {};
  const target = await resolveRegistry(flag, env);
  if (target === null) throw new PackageUsageError('no registry: pass --registry <url>, set AP_REGISTRY_URL, or run agent-platform registry login');
  if (!/^https?:\/\//.test(target.url)) throw new PackageUsageError(`registry ${target.url} is not an http:// or https:// URL`);
  return createHttpRegistryClient({ url: target.url, timeoutMs: TIMEOUT_MS, token: () => target.key });
}

async function publish(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({ args: [...args], allowPositionals: true, options: registryOption });
  const [target, ...rest] = positionals;
  if (target === undefined) throw new PackageUsageError('package publish needs a package directory or a .tar.gz archive');
  if (rest.length > 0) throw new PackageUsageError(`unexpected argument '${rest[0] ?? ''}'`);
  const client = await clientFor(values.registry, io);
  const path = resolve(io.cwd, target);
  const info = await stat(path).catch(() => null);
  if (info === null) {
    io.err(`agent-platform package publish: nothing at ${path}`);
    return EXIT_FAILED;
  }
  const archive = info.isDirectory() ? await buildInTemp(path, io) : new Uint8Array(await readFile(path));
  if (archive === null) return EXIT_FAILED;
  const published = await client.publish(archive);
  io.out(`Published ${published.name} ${published.version} to ${client.url}`);
  io.out(`  signed by registry key ${published.key_id}`);
  io.out(`  archive ${published.archive_sha256}, content ${published.content_hash}`);
  return EXIT_OK;
}

/** The archive of the package in `dir`, built into a temp directory (package.toml gets its content_hash as with `package build`). */
async function buildInTemp(dir: string, io: CliIo): Promise<Uint8Array | null> {
  const out = await mkdtemp(join(tmpdir(), 'ap-publish-'));
  try {
    const built = await buildPackage(dir, out);
    for (const warning of built.warnings) io.out(`warning: ${formatProblem(warning)}`);
    if (built.manifest_updated) io.out(`package.toml: [signing] content_hash = "${built.content_hash}"`);
    return new Uint8Array(await readFile(built.archive_path));
  } catch (error) {
    if (!(error instanceof PackageError)) throw error;
    printProblems(error.problems, io);
    io.out(`${dir}: ${error.problems.length} problem${error.problems.length === 1 ? '' : 's'}; nothing was published`);
    return null;
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

async function yank(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: { ...registryOption, reason: { type: 'string' }, security: { type: 'boolean' }, undo: { type: 'boolean' } },
  });
  const [name, version, ...rest] = positionals;
  if (name === undefined || version === undefined) throw new PackageUsageError('package yank needs a package name and a version');
  if (rest.length > 0) throw new PackageUsageError(`unexpected argument '${rest[0] ?? ''}'`);
  if (values.reason === undefined || values.reason.trim() === '') throw new PackageUsageError('package yank needs --reason <text> (it is recorded in the history)');
  if (values.undo === true && values.security === true) throw new PackageUsageError('--security applies to a yank, not to --undo');
  const client = await clientFor(values.registry, io);
  const undo = values.undo === true;
  const security = values.security === true;
  await client.yank(name, version, { reason: values.reason, ...(undo ? { yanked: false } : { security, yanked: true }) });
  io.out(undo ? `Un-yanked ${name} ${version} on ${client.url}` : `Yanked ${name} ${version}${security ? ' (security yank)' : ''} on ${client.url}: ${values.reason}`);
  return EXIT_OK;
}

async function deprecate(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({ args: [...args], allowPositionals: true, options: { ...registryOption, message: { type: 'string' }, undo: { type: 'boolean' } } });
  const [name, ...rest] = positionals;
  if (name === undefined) throw new PackageUsageError('package deprecate needs a package name');
  if (rest.length > 0) throw new PackageUsageError(`unexpected argument '${rest[0] ?? ''}'`);
  const undo = values.undo === true;
  if (undo && values.message !== undefined) throw new PackageUsageError('--undo takes no --message');
  if (!undo && (values.message === undefined || values.message.trim() === ''))
    throw new PackageUsageError('package deprecate needs --message <text> (what to use instead), or --undo');
  const client = await clientFor(values.registry, io);
  const pkg = await client.deprecate(name, undo ? null : (values.message ?? null));
  io.out(undo ? `${name} is no longer deprecated on ${client.url}` : `Deprecated ${name} on ${client.url}: ${pkg.deprecated?.message ?? ''}`);
  return EXIT_OK;
}

async function tag(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({ args: [...args], allowPositionals: true, options: { ...registryOption, remove: { type: 'boolean' } } });
  const [name, tagName, version, ...rest] = positionals;
  const remove = values.remove === true;
  if (name === undefined || tagName === undefined) throw new PackageUsageError('package tag needs a package name and a tag');
  if (remove ? version !== undefined : version === undefined)
    throw new PackageUsageError(remove ? '--remove takes no version' : 'package tag needs the version the tag names (or --remove)');
  if (rest.length > 0) throw new PackageUsageError(`unexpected argument '${rest[0] ?? ''}'`);
  const client = await clientFor(values.registry, io);
  const pkg = await client.setDistTag(name, tagName, remove ? null : (version ?? null));
  const tags = Object.entries(pkg.dist_tags ?? {}).map(([t, v]) => `${t} ${v}`).join(', ');
  io.out(remove ? `Removed the tag ${tagName} of ${name} on ${client.url}; tags: ${tags}` : `Tagged ${name} ${version ?? ''} as ${tagName} on ${client.url}; tags: ${tags}`);
  return EXIT_OK;
}

async function search(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: { ...registryOption, type: { type: 'string' }, category: { type: 'string' }, region: { type: 'string' }, page: { type: 'string' } },
  });
  const type = values.type;
  if (type !== undefined && !(PACKAGE_TYPES as readonly string[]).includes(type))
    throw new PackageUsageError(`--type must be one of ${PACKAGE_TYPES.join(', ')}`);
  const page = values.page === undefined ? undefined : Number(values.page);
  if (page !== undefined && (!Number.isInteger(page) || page < 1)) throw new PackageUsageError('--page must be a whole number from 1');
  const q = positionals.join(' ').trim();
  const client = await clientFor(values.registry, io);
  const result = await client.search({
    ...(q === '' ? {} : { q }),
    ...(type === undefined ? {} : { type: type as PackageType }),
    ...(values.category === undefined ? {} : { category: values.category }),
    ...(values.region === undefined ? {} : { region: values.region }),
    ...(page === undefined ? {} : { page }),
  });
  if (result.results.length === 0) {
    io.out(result.total === 0 ? 'No packages match.' : `No results on page ${result.page} (${result.total} in all).`);
    return EXIT_OK;
  }
  for (const line of table(result.results)) io.out(line);
  const pages = Math.max(1, Math.ceil(result.total / result.per_page));
  io.out(`${result.total} package${result.total === 1 ? '' : 's'}${pages > 1 ? ` (page ${result.page} of ${pages}; --page <n> for more)` : ''}`);
  return EXIT_OK;
}

/** NAME, TYPE, LATEST, REGIONS and TITLE in aligned columns; the title is cut at 60 characters. */
function table(hits: readonly RegistrySearchHit[]): string[] {
  return alignedColumns([
    ['NAME', 'TYPE', 'LATEST', 'REGIONS', 'TITLE'],
    ...hits.map((h) => [h.name, h.type, h.latest, h.regions.length === 0 ? 'all' : h.regions.join(','), h.title.length > 60 ? `${h.title.slice(0, 59)}…` : h.title]),
  ]);
}

/** Rows as lines, every column but the last padded to its widest cell, two spaces between. */
export function alignedColumns(rows: readonly (readonly string[])[]): string[] {
  const last = Math.max(...rows.map((r) => r.length)) - 1;
  const widths = Array.from({ length: last }, (_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((cell, i) => (i < last ? cell.padEnd(widths[i] ?? 0) : cell)).join('  ').trimEnd());
}

function printProblems(problems: readonly PackageProblem[], io: CliIo): void {
  for (const problem of problems) io.out(formatProblem(problem));
}
