export { createRegistryTeamService, assertTeamName, type RegistryTeamService, type TeamRemoval } from './team-service.ts';
export { TEAM_OWNER_PREFIX, teamOwner, teamNameOf, type RegistryTeamRecord } from './team-records.ts';
