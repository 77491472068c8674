import { relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { PackageProblem } from '@agent-platform/contracts';
import { buildPackage, formatProblem, PackageError, validatePackage } from '@agent-platform/packages';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, type CliIo, type CommandGroup } from './command.ts';
import { PackageUsageError, REGISTRY_ACTIONS, REGISTRY_USAGE, runRegistryAction, type RegistryAction } from './package-registry-actions.ts';
import { INFO_USAGE, runInfoAction } from './package-info-action.ts';
import { OWNERS_USAGE, runOwnersAction } from './package-owner-actions.ts';

const USAGE = `Usage:
  agent-platform package validate <dir>              check a package directory against every rule
  agent-platform package build <dir> [--out <dir>]   set [signing] content_hash and write <name>-<version>.tar.gz
                                                     (default --out: <dir>/dist)
${INFO_USAGE}
${OWNERS_USAGE}
${REGISTRY_USAGE}

Each problem prints as "file: field: message [rule]"; docs/packages.md lists the rules.
Exit status: 0 valid/built/done, 1 problems found or the registry refused, 2 bad command line.`;

const isRegistryAction = (action: string | undefined): action is RegistryAction => (REGISTRY_ACTIONS as readonly (string | undefined)[]).includes(action);

/** `agent-platform package ...`: checks, builds, and the registry side of packages (docs/packages.md). */
export const packageCommand: CommandGroup = {
  summary: 'validate, build, publish, yank, search, deprecate or tag packages; show one (info); manage their owners',
  usage: USAGE,
  async run(args, io) {
    const [first, ...others] = args;
    if ((isRegistryAction(first) || first === 'owners' || first === 'info') && !others.includes('--help') && !others.includes('-h')) {
      try {
        if (first === 'owners') return await runOwnersAction(others, io);
        return first === 'info' ? await runInfoAction(others, io) : await runRegistryAction(first, others, io);
      } catch (error) {
        if (error instanceof PackageUsageError || isParseArgsError(error)) return usageError(io, (error as Error).message);
        throw error;
      }
    }
    let parsed;
    try {
      parsed = parseArgs({
        args: [...args],
        allowPositionals: true,
        options: { out: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      });
    } catch (error) {
      return usageError(io, error instanceof Error ? error.message : String(error));
    }
    const [action, dir, ...rest] = parsed.positionals;
    if (parsed.values.help === true) {
      io.out(USAGE);
      return EXIT_OK;
    }
    if (action !== 'validate' && action !== 'build')
      return usageError(io, action === undefined ? 'missing action' : `unknown action '${action}'`);
    if (dir === undefined) return usageError(io, `package ${action} needs a package directory`);
    if (rest.length > 0) return usageError(io, `unexpected argument '${rest[0] ?? ''}'`);
    if (action === 'validate' && parsed.values.out !== undefined)
      return usageError(io, '--out applies to package build only');
    const path = resolve(io.cwd, dir);
    return action === 'validate' ? validate(path, dir, io) : build(path, parsed.values.out, io);
  },
};

async function validate(path: string, shown: string, io: CliIo): Promise<number> {
  const report = await validatePackage(path);
  printWarnings(report.warnings, io);
  const { manifest, payload } = report;
  if (!report.ok || manifest === undefined || payload === undefined) {
    printProblems(report.problems, io);
    io.out(`${shown}: ${count(report.problems.length, 'problem')}`);
    return EXIT_FAILED;
  }
  const { type, name, version } = manifest.package;
  const warnings = report.warnings.length === 0 ? '' : `, ${count(report.warnings.length, 'warning')}`;
  io.out(`OK ${type} ${name} ${version} (payload/${payload.file}, ${report.content_hash ?? ''}${warnings})`);
  return EXIT_OK;
}

async function build(path: string, out: string | undefined, io: CliIo): Promise<number> {
  try {
    const result = await buildPackage(path, out === undefined ? undefined : resolve(io.cwd, out));
    printWarnings(result.warnings, io);
    if (result.manifest_updated) io.out(`package.toml: [signing] content_hash = "${result.content_hash}"`);
    io.out(`Built ${relative(io.cwd, result.archive_path) || result.archive_path} (sha256 ${result.sha256})`);
    return EXIT_OK;
  } catch (error) {
    if (!(error instanceof PackageError)) throw error;
    printProblems(error.problems, io);
    io.out(`${relative(io.cwd, path) || '.'}: ${count(error.problems.length, 'problem')}; nothing was built`);
    return EXIT_FAILED;
  }
}

function printProblems(problems: readonly PackageProblem[], io: CliIo): void {
  for (const problem of problems) io.out(formatProblem(problem));
}

function printWarnings(warnings: readonly PackageProblem[], io: CliIo): void {
  for (const warning of warnings) io.out(`warning: ${formatProblem(warning)}`);
}

function usageError(io: CliIo, message: string): number {
  io.err(`agent-platform package: ${message}`);
  io.err(USAGE);
  return EXIT_USAGE;
}

function isParseArgsError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_');
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
