import { parseArgs } from 'node:util';
import { REGISTRY_TEAM_ROLES, type RegistryTeam, type RegistryTeamRole } from '@agent-platform/contracts';
import { RegistryRequestError } from '@agent-platform/registry-core';
import { EXIT_FAILED, EXIT_OK, type CliIo } from './command.ts';
import { clientFor, PackageUsageError } from './package-registry-actions.ts';

export const TEAM_USAGE = `  agent-platform registry team create <team>
      Makes a team (a package lists it among its owners as team:<team>); you are its first owner.
  agent-platform registry team list
      The teams you are a member of or invited to.
  agent-platform registry team show <team>
      Its members (with their roles) and pending invitations.
  agent-platform registry team invite <team> <identity> [--role member|owner]
      Invites key:<name> or <issuer>#<sub> (team owners); a member's role is changed instead.
  agent-platform registry team accept <team>
      Accepts your own invitation.
  agent-platform registry team remove <team> <identity>
      Removes a member or withdraws an invitation (team owners); your own identity: leave, or
      decline. The member loses its rights over the team's packages at once.
  agent-platform registry team delete <team>
      Deletes the team (team owners); refused while a package names it among its owners or
      invitations (remove it there first). Its name is not given to a new team.
  Each takes --registry <url>; teams need your own key or access token, never a token (reg_pt_).`;

const registryOption = { registry: { type: 'string' } } as const;

/** `registry team create|list|show|invite|accept|remove|delete` (docs/registry.md "Teams"). */
export async function runTeamAction(args: readonly string[], io: CliIo): Promise<number> {
  const [action, ...rest] = args;
  try {
    if (action === 'create') return await one(rest, io, 'create', async (client, [team]) => [`Made team ${team} on ${client.url}; you are its owner.`, await client.createTeam(team)]);
    if (action === 'show') return await one(rest, io, 'show', async (client, [team]) => ['', found(await client.team(team), team, client.url)]);
    if (action === 'accept') return await one(rest, io, 'accept', async (client, [team]) => [`Joined team ${team} on ${client.url}.`, await client.acceptTeamInvitation(team)]);
    if (action === 'invite') return await invite(rest, io);
    if (action === 'remove') return await one(rest, io, 'remove', async (client, [team, identity]) => [`Removed ${identity} from team ${team} on ${client.url}.`, await client.removeTeamMember(team, identity)], 2);
    if (action === 'list') return await list(rest, io);
    if (action === 'delete') return await deleteTeam(rest, io);
    throw new PackageUsageError(action === undefined ? 'registry team needs an action: create, list, show, invite, accept, remove or delete' : `unknown team action '${action}'`);
  } catch (error) {
    if (!(error instanceof RegistryRequestError)) throw error;
    io.err(`agent-platform registry team ${action ?? ''}: ${error.message}`);
    if (error.status === 401) io.err('Run agent-platform registry login, or set AP_REGISTRY_KEY, to send your registry key.');
    return EXIT_FAILED;
  }
}

type Client = Awaited<ReturnType<typeof clientFor>>;

/** An action taking `count` positionals (team, then identity): prints a line (when not empty) and the team. */
async function one(
  args: readonly string[],
  io: CliIo,
  action: string,
  run: (client: Client, positionals: [string, string]) => Promise<[string, RegistryTeam]>,
  count: 1 | 2 = 1,
): Promise<number> {
  const { values, positionals } = parseArgs({ args: [...args], allowPositionals: true, options: registryOption });
  const needs = count === 1 ? 'a team name' : 'a team name and an identity';
  if (positionals.length < count) throw new PackageUsageError(`registry team ${action} needs ${needs}`);
  if (positionals.length > count) throw new PackageUsageError(`unexpected argument '${positionals[count] ?? ''}'`);
  const client = await clientFor(values.registry, io);
  const [line, team] = await run(client, [positionals[0] ?? '', positionals[1] ?? '']);
  if (line !== '') io.out(line);
  for (const text of describe(team)) io.out(text);
  return EXIT_OK;
}

async function invite(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({ args: [...args], allowPositionals: true, options: { ...registryOption, role: { type: 'string' } } });
  const [team, identity, ...rest] = positionals;
  if (team === undefined || identity === undefined) throw new PackageUsageError('registry team invite needs a team name and an identity (key:<name> or <issuer>#<sub>)');
  if (rest.length > 0) throw new PackageUsageError(`unexpected argument '${rest[0] ?? ''}'`);
  const role = values.role ?? 'member';
  if (!(REGISTRY_TEAM_ROLES as readonly string[]).includes(role)) throw new PackageUsageError(`--role must be one of ${REGISTRY_TEAM_ROLES.join(', ')}`);
  const client = await clientFor(values.registry, io);
  const answer = await client.inviteToTeam(team, identity, role as RegistryTeamRole);
  const member = answer.members.find((m) => m.identity === identity.trim());
  io.out(member === undefined ? `Invited ${identity} to team ${team} as ${role} on ${client.url}; they join when they accept.` : `${identity} is now ${role} of team ${team} on ${client.url}.`);
  for (const text of describe(answer)) io.out(text);
  return EXIT_OK;
}

async function deleteTeam(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({ args: [...args], allowPositionals: true, options: registryOption });
  const [team, ...rest] = positionals;
  if (team === undefined) throw new PackageUsageError('registry team delete needs a team name');
  if (rest.length > 0) throw new PackageUsageError(`unexpected argument '${rest[0] ?? ''}'`);
  const client = await clientFor(values.registry, io);
  const deleted = await client.deleteTeam(team);
  io.out(`Deleted team ${deleted.name} on ${client.url} (${deleted.deleted_at}).`);
  return EXIT_OK;
}

async function list(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({ args: [...args], allowPositionals: true, options: registryOption });
  if (positionals.length > 0) throw new PackageUsageError(`unexpected argument '${positionals[0] ?? ''}'`);
  const client = await clientFor(values.registry, io);
  const teams = await client.teams();
  if (teams.length === 0) io.out(`No teams on ${client.url}.`);
  for (const team of teams) io.out(`${team.name}  ${team.members.length} member${team.members.length === 1 ? '' : 's'}, ${team.invitations.length} invited`);
  return EXIT_OK;
}

function found(team: RegistryTeam | null, name: string, url: string): RegistryTeam {
  if (team === null) throw new RegistryRequestError(`registry ${url}: team '${name}' not found`, { status: 404, details: {}, retryable: false });
  return team;
}

function describe(team: RegistryTeam): string[] {
  return [
    `team ${team.name}`,
    ...team.members.map((m) => `  ${m.role.padEnd(7)} ${m.identity}`),
    ...team.invitations.map((i) => `  invited ${i.identity} (${i.role}, by ${i.invited_by})`),
  ];
}
