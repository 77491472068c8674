import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ACTIONS, ROLES, type Action, type Role } from '@agent-platform/contracts';
import { PERMISSIONS, can, renderPermissionTable } from './permissions.ts';

/**
 * The matrix of spec §Authentication, typed out again by hand from the spec rather than from
 * PERMISSIONS, so that a wrong edit of PERMISSIONS fails here.
 */
const SPEC_MATRIX: Array<[Action[], Role[]]> = [
  [['KeyManagement', 'AuditWrite', 'VaultRead', 'VaultManage'], ['admin']],
  [['SecurityAudit'], ['admin', 'auditor']],
  [['SecurityRead'], ['admin', 'operator', 'viewer', 'auditor']],
  [['AgentInvoke', 'WorkflowRun', 'MemoryRead', 'MemoryWrite'], ['admin', 'operator', 'developer', 'service']],
  [
    ['AgentStatus', 'WorkflowList', 'WorkflowStatus'],
    ['admin', 'operator', 'developer', 'viewer', 'service', 'auditor'],
  ],
  [
    ['ChannelRead', 'IntegrationRead', 'BudgetRead', 'LicenceRead'],
    ['admin', 'operator', 'developer', 'viewer', 'auditor'],
  ],
  [['ChannelManage', 'IntegrationManage', 'ScheduleCreate', 'ScheduleUpdate', 'ScheduleDelete'], ['admin', 'operator']],
  [['SkillInstall'], ['admin', 'operator', 'developer']],
];

const SPEC_ACTIONS = new Set(SPEC_MATRIX.flatMap(([actions]) => actions));

describe('can (spec §Authentication matrix)', () => {
  for (const [actions, allowed] of SPEC_MATRIX) {
    for (const action of actions) {
      it(`${action}: exactly ${allowed.join(', ')}`, () => {
        for (const role of ROLES) expect(can(role, action), `${role} ${action}`).toBe(allowed.includes(role));
      });
    }
  }

  it('marks exactly the spec rows as spec and gives every decision row a reason', () => {
    for (const action of ACTIONS) {
      const rule = PERMISSIONS[action];
      expect(rule.source, action).toBe(SPEC_ACTIONS.has(action) ? 'spec' : 'decision');
      if (rule.source === 'decision') expect(rule.why, action).toBeTruthy();
    }
  });

  it('lets admin do everything, as the spec says of the role', () => {
    for (const action of ACTIONS) expect(can('admin', action), action).toBe(true);
  });

  it('never gives operator key or vault management', () => {
    for (const action of ['KeyManagement', 'VaultRead', 'VaultManage'] as const) expect(can('operator', action)).toBe(false);
  });
});

describe('docs/permissions.md', () => {
  it('holds the table rendered from PERMISSIONS (run `npm run docs:generate` after a change)', async () => {
    const text = await readFile(new URL('../../../../docs/permissions.md', import.meta.url), 'utf8');
    const match = /<!-- permissions:start -->\n([\s\S]*?)\n<!-- permissions:end -->/.exec(text);
    expect(match?.[1]).toBe(renderPermissionTable());
  });
});
