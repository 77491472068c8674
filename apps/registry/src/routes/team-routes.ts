import {
  ErrorEnvelope,
  RegistryTeam,
  RegistryTeamCreateBody,
  RegistryTeamDeleted,
  RegistryTeamInviteBody,
  RegistryTeamList,
  RegistryTeamMemberParams,
  RegistryTeamParams,
} from '@agent-platform/contracts';
import { createRegistryTeamService } from '@agent-platform/registry-core';
import { actorOf, type RegistryCaller } from '../auth/registry-access.ts';
import { Forbidden } from './forbidden-schema.ts';
import { registryAudit } from './registry-audit.ts';
import type { RegistryRoutePlugin } from './registry-route.ts';

const TAGS = ['teams'];
const Failures = { 400: ErrorEnvelope, 403: Forbidden, 404: ErrorEnvelope, 409: ErrorEnvelope, 415: ErrorEnvelope, 422: ErrorEnvelope };

/**
 * Teams owning packages (docs/registry.md "Teams"): a publisher makes a team and is its first
 * owner; team owners invite, and only the invited identity accepts; a team owner removes members
 * (a member leaves, an invitee declines) and the team always keeps an owner. A package owned by
 * `team:<name>` may be changed by every current member; a team no package names may be deleted.
 * Each change is audited (category `access`, actions `registry.team.*`, the team as target)
 * unless `[audit] enabled = false`.
 */
export const teamRoutes: RegistryRoutePlugin = (app, deps) => {
  const teams = createRegistryTeamService(deps);
  const record = registryAudit(deps);
  const audit = (caller: RegistryCaller, action: string, team: string, metadata: Record<string, unknown>) =>
    record({
      category: 'access',
      identity: caller.identity,
      role: caller.role,
      action,
      target: `team:${team}`,
      result: 'success',
      metadata,
    });

  app.post(
    '/teams',
    {
      config: { registryAccess: 'publish' },
      schema: { tags: TAGS, summary: 'Make a team; the caller is its first owner', body: RegistryTeamCreateBody, response: { 201: RegistryTeam, ...Failures } },
    },
    async (request, reply) => {
      const caller = request.registryCaller;
      const team = await teams.create(request.body.name, actorOf(caller));
      await audit(caller, 'registry.team.created', team.name, {});
      return reply.code(201).send(team);
    },
  );

  app.get(
    '/teams',
    {
      config: { registryAccess: 'authenticated' },
      schema: { tags: TAGS, summary: 'The teams you are a member of or invited to (a registry admin: every team)', response: { 200: RegistryTeamList } },
    },
    async (request) => ({ teams: await teams.list(actorOf(request.registryCaller)) }),
  );

  app.get(
    '/teams/:team',
    {
      config: { registryAccess: 'read' },
      schema: { tags: TAGS, summary: 'A team: its members, and its pending invitations for its members, the invitees and registry admins', params: RegistryTeamParams, response: { 200: RegistryTeam, 400: ErrorEnvelope, 404: ErrorEnvelope } },
    },
    async (request) => teams.get(request.params.team, actorOf(request.registryCaller)),
  );

  app.post(
    '/teams/:team/invitations',
    {
      config: { registryAccess: 'publish' },
      schema: {
        tags: TAGS,
        summary: "Invite an identity (team owners); an existing member's role is changed instead",
        params: RegistryTeamParams,
        body: RegistryTeamInviteBody,
        response: { 200: RegistryTeam, ...Failures },
      },
    },
    async (request) => {
      const caller = request.registryCaller;
      const team = await teams.invite(request.params.team, request.body, actorOf(caller));
      await audit(caller, 'registry.team.invited', team.name, { identity: request.body.identity.trim(), role: request.body.role ?? 'member' });
      return team;
    },
  );

  app.post(
    '/teams/:team/invitations/accept',
    {
      config: { registryAccess: 'publish' },
      schema: { tags: TAGS, summary: 'Accept your own invitation to the team', params: RegistryTeamParams, response: { 200: RegistryTeam, ...Failures } },
    },
    async (request) => {
      const caller = request.registryCaller;
      const team = await teams.accept(request.params.team, actorOf(caller));
      await audit(caller, 'registry.team.joined', team.name, { role: team.members.find((m) => m.identity === caller.identity)?.role ?? null });
      return team;
    },
  );

  app.delete(
    '/teams/:team',
    {
      config: { registryAccess: 'publish' },
      schema: {
        tags: TAGS,
        summary: 'Delete the team (team owners, registry admins): refused (409) while a package names it among its owners or pending owners; the name is not reused',
        params: RegistryTeamParams,
        response: { 200: RegistryTeamDeleted, ...Failures },
      },
    },
    async (request) => {
      const caller = request.registryCaller;
      const deleted = await teams.delete(request.params.team, actorOf(caller));
      await audit(caller, 'registry.team.deleted', deleted.name, {});
      return deleted;
    },
  );

  app.delete(
    '/teams/:team/members/:identity',
    {
      config: { registryAccess: 'publish' },
      schema: {
        tags: TAGS,
        summary: 'Remove a member or withdraw an invitation (team owners); leave, or decline your invitation; effective on the next request',
        params: RegistryTeamMemberParams,
        response: { 200: RegistryTeam, ...Failures },
      },
    },
    async (request) => {
      const caller = request.registryCaller;
      const { team, removed } = await teams.remove(request.params.team, request.params.identity, actorOf(caller));
      await audit(caller, removed === 'member' ? 'registry.team.member_removed' : 'registry.team.invitation_removed', team.name, { identity: request.params.identity });
      return team;
    },
  );
};
