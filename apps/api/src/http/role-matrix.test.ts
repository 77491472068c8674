import { ACTIONS, ROLES, type Action, type Role } from '@agent-platform/contracts';
import { can } from '@agent-platform/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registeredRoutes } from './route-catalog.ts';
import { startTestApi, type TestApi } from '../testing/index.ts';

// Every role against one route per action (issue 2, "Tests that must exist"), over real HTTP.
// A mutating route is called with a text/plain body: an allowed role then stops at 415, which
// comes after the role check (spec "Rules of the model" 5), so nothing runs and nothing changes;
// a denied role gets the flat 403 of spec §Authentication rule 6.
const VALID_UUID = '00000000-0000-4000-8000-000000000000';
const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

let api: TestApi;
const keys = new Map<Role, string>();

beforeAll(async () => {
  api = await startTestApi({ config: { auth: { mode: 'local' } } });
  for (const role of ROLES) keys.set(role, await api.issueKey(role, `matrix-${role}`));
});
afterAll(async () => {
  await api.close();
});

/** One route per action: the first registered route that declares it. */
function routePerAction(): Array<{ action: Action; method: string; url: string }> {
  const seen = new Map<Action, { action: Action; method: string; url: string }>();
  for (const route of registeredRoutes(api.app)) {
    const action = route.action as Action | undefined;
    if (action === undefined || !ACTIONS.includes(action) || seen.has(action) || route.framework) continue;
    seen.set(action, { action, method: route.method, url: route.url.replace(/:[a-z_]+/g, VALID_UUID) });
  }
  return [...seen.values()];
}

describe('role matrix over HTTP', () => {
  it('covers the actions that have routes today', () => {
    const covered = routePerAction().map((r) => r.action);
    for (const action of ['KeyManagement', 'AuditWrite', 'VaultRead', 'VaultManage', 'SecurityAudit', 'SecurityRead', 'ConfigRead', 'ConfigReload', 'DaemonShutdown', 'LogRead', 'StatusRead', 'MetricsRead', 'LicenceRead', 'ProviderRead', 'AgentList', 'AgentStatus', 'AgentStart', 'AgentStop', 'AgentUpdate', 'SessionRead', 'SkillInstall', 'TemplateRead', 'MemoryRead', 'MemoryWrite', 'AgentSendMessage', 'AgentInvoke', 'BudgetRead', 'CompetencyInstall', 'CompetencyManage', 'CompetencyEquip', 'IntegrationRead'] as const) {
      expect(covered).toContain(action);
    }
  });

  it('answers 403 flat exactly for the roles the matrix denies', async () => {
    const mismatches: string[] = [];
    for (const route of routePerAction()) {
      for (const role of ROLES) {
        const mutating = MUTATING.has(route.method);
        const res = await api.request(route.method, route.url, {
          token: keys.get(role)!,
          ...(mutating ? { body: 'x', headers: { 'content-type': 'text/plain' } } : {}),
        });
        const allowed = can(role, route.action);
        const denied = res.status === 403 && res.body?.error === 'forbidden';
        if (allowed === denied) mismatches.push(`${role} ${route.method} ${route.url} (${route.action}) -> ${res.status}`);
        if (allowed && mutating && res.status !== 415) mismatches.push(`${role} ${route.method} ${route.url} ran: ${res.status}`);
        if (denied) expect(res.body.message).toContain(route.action);
      }
    }
    expect(mismatches).toEqual([]);
    // Nothing a refused or 415'd request touched may have acted: the platform is still up.
    expect((await api.request('GET', '/health')).status).toBe(200);
  });
});
