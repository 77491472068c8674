import { parseArgs } from 'node:util';
import { createHttpRegistryClient, RegistryRequestError } from '@agent-platform/registry-core';
import { deleteLogin, normalizeRegistryUrl, writeLogin } from './cli-credentials.ts';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, type CliIo, type CommandGroup } from './command.ts';
import { PackageUsageError } from './package-registry-actions.ts';
import { runTokenAction, TOKEN_USAGE } from './registry-token-actions.ts';
import { runTeamAction, TEAM_USAGE } from './registry-team-actions.ts';
import { runTrustedPublisherAction, TRUSTED_PUBLISHER_USAGE } from './registry-trusted-publisher-actions.ts';

const USAGE = `Usage:
  agent-platform registry login [--registry <url>]
      Reads a registry key (reg_sk_...) or token from standard input, checks it with the
      registry (GET /auth/whoami) and keeps it for that registry in
      $AP_CLI_CONFIG_DIR/credentials.json (default ~/.config/agent-platform/, mode 0600).
      The registry defaults to $AP_REGISTRY_URL. Never pass a key as an argument.
  agent-platform registry logout
      Forgets the stored key.
${TOKEN_USAGE}
${TEAM_USAGE}
${TRUSTED_PUBLISHER_USAGE}

$AP_REGISTRY_KEY, when set, is sent instead of the stored key.
Exit status: 0 done, 1 the registry refused or could not be reached, 2 bad command line.`;

/** What a login check may take. */
const TIMEOUT_MS = 30_000;

/** `agent-platform registry ...`: keeps the key `package publish` and `package yank` send (docs/packages.md). */
export const registryCommand: CommandGroup = {
  summary: 'log in to a package registry (the key is read from stdin) or log out; make, list and revoke your tokens; manage teams',
  usage: USAGE,
  async run(args, io) {
    const [sub, ...rest] = args;
    if (sub === '--help' || sub === '-h' || sub === 'help') {
      io.out(USAGE);
      return EXIT_OK;
    }
    try {
      if (sub === 'login') return await login(rest, io);
      if (sub === 'logout') return await logout(rest, io);
      if (sub === 'token') return await runTokenAction(rest, io);
      if (sub === 'team') return await runTeamAction(rest, io);
      if (sub === 'trusted-publisher') return await runTrustedPublisherAction(rest, io);
      return usageError(io, sub === undefined ? 'missing action (login, logout, token or team)' : `unknown action '${sub}'`);
    } catch (error) {
      if (error instanceof PackageUsageError) return usageError(io, error.message);
      const code = (error as { code?: unknown } | null)?.code;
      if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_')) return usageError(io, (error as Error).message);
      throw error;
    }
  },
};

async function login(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({ args: [...args], allowPositionals: true, options: { registry: { type: 'string' } } });
  if (positionals.length > 0)
    return usageError(io, `unexpected argument '${positionals[0] ?? ''}' (the key is read from standard input, never from the command line)`);
  const env = io.env ?? {};
  const chosen = values.registry ?? env.AP_REGISTRY_URL;
  if (chosen === undefined || chosen === '') return usageError(io, 'registry login needs --registry <url> (or AP_REGISTRY_URL)');
  const registry = normalizeRegistryUrl(chosen);
  if (!/^https?:\/\//.test(registry)) return usageError(io, `registry ${registry} is not an http:// or https:// URL`);
  if (io.readSecret === undefined) {
    io.err('agent-platform registry login: no standard input to read the key from');
    return EXIT_FAILED;
  }
  const key = (await io.readSecret(`Registry key for ${registry}: `)).trim();
  if (key === '') {
    io.err('agent-platform registry login: no key on standard input; pipe it in, e.g. printf %s "$KEY" | agent-platform registry login');
    return EXIT_FAILED;
  }
  const client = createHttpRegistryClient({ url: registry, timeoutMs: TIMEOUT_MS, token: () => key });
  try {
    const who = await client.whoami();
    if (!who.authenticated) {
      io.err(`agent-platform registry login: ${registry} did not recognise the key (it answers as ${who.identity}); nothing was stored`);
      return EXIT_FAILED;
    }
    const path = await writeLogin(env, { registry, key });
    io.out(`Logged in to ${registry} as ${who.identity} (${who.role}); key stored in ${path}`);
    return EXIT_OK;
  } catch (error) {
    if (!(error instanceof RegistryRequestError)) throw error;
    io.err(`agent-platform registry login: ${error.message}; nothing was stored`);
    return EXIT_FAILED;
  }
}

async function logout(args: readonly string[], io: CliIo): Promise<number> {
  if (args.length > 0) return usageError(io, `unexpected argument '${args[0] ?? ''}'`);
  const removed = await deleteLogin(io.env ?? {});
  io.out(removed === null ? 'Not logged in to a registry.' : `Logged out of ${removed.registry}.`);
  return EXIT_OK;
}

function usageError(io: CliIo, message: string): number {
  io.err(`agent-platform registry: ${message}`);
  io.err(USAGE);
  return EXIT_USAGE;
}
