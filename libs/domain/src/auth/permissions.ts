import { ACTIONS, ROLES, type Action, type Role } from '@agent-platform/contracts';

const ALL: readonly Role[] = ROLES;
const READERS: readonly Role[] = ['admin', 'operator', 'developer', 'viewer', 'auditor'];
const INVOKERS: readonly Role[] = ['admin', 'operator', 'developer', 'service'];
const ADMIN: readonly Role[] = ['admin'];
const OPERATORS: readonly Role[] = ['admin', 'operator'];

export interface PermissionRule {
  roles: readonly Role[];
  /** `spec` when spec §Authentication lists the roles; `decision` when the project chose them. */
  source: 'spec' | 'decision';
  /** Why, for decisions; rendered into docs/permissions.md. */
  why?: string;
}

/**
 * The permission matrix: the one table every route check, docs/permissions.md and the role
 * tests are derived from. Rows marked `spec` copy spec §Authentication exactly; rows marked
 * `decision` are the project's choice for actions the spec leaves open.
 */
export const PERMISSIONS: Record<Action, PermissionRule> = {
  KeyManagement: { roles: ADMIN, source: 'spec' },
  AuditWrite: { roles: ADMIN, source: 'spec' },
  VaultRead: { roles: ADMIN, source: 'spec' },
  VaultManage: { roles: ADMIN, source: 'spec' },
  SecurityAudit: { roles: ['admin', 'auditor'], source: 'spec' },
  SecurityRead: { roles: ['admin', 'operator', 'viewer', 'auditor'], source: 'spec' },
  AuditCheckpoint: {
    roles: ['admin', 'auditor'],
    source: 'decision',
    why: 'Writing an audit checkpoint (POST /security/checkpoints) only records the chain as it is; the roles that read the trail (SecurityAudit) may anchor it.',
  },
  AgentInvoke: { roles: INVOKERS, source: 'spec' },
  WorkflowRun: { roles: INVOKERS, source: 'spec' },
  MemoryRead: { roles: INVOKERS, source: 'spec' },
  MemoryWrite: { roles: INVOKERS, source: 'spec' },
  AgentStatus: { roles: ALL, source: 'spec' },
  WorkflowList: { roles: ALL, source: 'spec' },
  WorkflowStatus: { roles: ALL, source: 'spec' },
  ChannelRead: { roles: READERS, source: 'spec' },
  IntegrationRead: { roles: READERS, source: 'spec' },
  BudgetRead: { roles: READERS, source: 'spec' },
  LicenceRead: { roles: READERS, source: 'spec' },
  ChannelManage: { roles: OPERATORS, source: 'spec' },
  IntegrationManage: { roles: OPERATORS, source: 'spec' },
  IntegrationInstall: {
    roles: ADMIN,
    source: 'decision',
    why: 'Installing an integration package from a directory on the server (POST /integrations/install, or a POST /catalog/install whose plan brings one) names a program the agent workers start as the platform\'s user, with no registry signature: admin only.',
  },
  ScheduleCreate: { roles: OPERATORS, source: 'spec' },
  ScheduleUpdate: { roles: OPERATORS, source: 'spec' },
  ScheduleDelete: { roles: OPERATORS, source: 'spec' },
  SkillInstall: { roles: ['admin', 'operator', 'developer'], source: 'spec' },
  AgentList: {
    roles: ALL,
    source: 'decision',
    why: 'The spec calls it "broadly readable"; every role may list agents, as with AgentStatus.',
  },
  AgentStart: { roles: OPERATORS, source: 'decision', why: 'Agent lifecycle belongs to operators.' },
  AgentStop: { roles: OPERATORS, source: 'decision', why: 'Agent lifecycle belongs to operators.' },
  AgentSendMessage: {
    roles: INVOKERS,
    source: 'decision',
    why: 'Sending a message is an invocation; same roles as AgentInvoke.',
  },
  AgentUpdate: {
    roles: OPERATORS,
    source: 'decision',
    why: 'Model, session reset and history deletion change an agent; lifecycle roles only.',
  },
  SessionRead: {
    roles: READERS,
    source: 'decision',
    why: 'Session rows carry state only (no transcript); readable like other status.',
  },
  CompetencyInstall: {
    roles: ['admin', 'operator', 'developer'],
    source: 'decision',
    why: 'Installing a competency is a package install; same roles as SkillInstall.',
  },
  CompetencyManage: { roles: OPERATORS, source: 'decision', why: 'Changes live agent behaviour.' },
  CompetencyEquip: { roles: OPERATORS, source: 'decision', why: 'Changes live agent behaviour.' },
  ConfigRead: {
    roles: ['admin', 'operator', 'auditor'],
    source: 'decision',
    why: 'The config (secrets redacted) describes the deployment; auditors review it.',
  },
  ConfigReload: {
    roles: ADMIN,
    source: 'decision',
    why: 'A reload can change auth settings and the licence: admin only.',
  },
  DaemonShutdown: { roles: ADMIN, source: 'decision', why: 'Stops the service for everyone.' },
  TemplateRead: { roles: READERS, source: 'decision', why: 'Read-only catalogue data.' },
  BackupCreate: { roles: OPERATORS, source: 'decision', why: 'The spec gives operators backups.' },
  BackupList: { roles: OPERATORS, source: 'decision', why: 'The spec gives operators backups.' },
  BackupRestore: { roles: OPERATORS, source: 'decision', why: 'The spec gives operators backups.' },
  BackupRestoreForeign: {
    roles: ADMIN,
    source: 'decision',
    why: 'POST /backup/restore with allow_foreign: true brings in agents, packages, integrations and webhooks another platform made, which then run here: admin only.',
  },
  ComplianceRead: {
    roles: ['admin', 'auditor'],
    source: 'decision',
    why: 'The spec gives auditors compliance reports; operators run the platform, not its audit.',
  },
  TriggerRead: { roles: ALL, source: 'decision', why: 'Trigger rows are agent status.' },
  TriggerManage: { roles: OPERATORS, source: 'decision', why: 'Like schedules: operators.' },
  WebhookRead: { roles: READERS, source: 'decision', why: 'Read-only configuration data.' },
  WebhookManage: { roles: OPERATORS, source: 'decision', why: 'Outbound delivery targets: operators.' },
  LogRead: {
    roles: ['admin', 'operator', 'auditor'],
    source: 'decision',
    why: 'Logs describe platform activity; the people who run and audit it read them.',
  },
  StatusRead: { roles: ALL, source: 'decision', why: 'Daemon status is harmless and useful to all.' },
  ProviderRead: { roles: READERS, source: 'decision', why: 'Providers and models are boot config.' },
  MetricsRead: {
    roles: ALL,
    source: 'decision',
    why: 'The spec says only "authenticated": any role may scrape metrics.',
  },
  RevocationOverride: {
    roles: OPERATORS,
    source: 'decision',
    why: 'Lets a package a registry revoked for security be installed and activated again: those who run the platform, not every installer.',
  },
  ComplianceAttest: {
    roles: ['admin', 'auditor'],
    source: 'decision',
    why: 'Signed attestations of manual compliance controls (create, revoke): the roles that read compliance reports; an auditor signs off what the platform cannot check.',
  },
  RetentionRead: {
    roles: ['admin', 'operator', 'auditor'],
    source: 'decision',
    why: 'Retention periods, legal holds and sweep results (GET /retention/status, /retention/holds) describe what the platform keeps: those who run and audit it read them.',
  },
  RetentionManage: {
    roles: ['admin', 'auditor'],
    source: 'decision',
    why: 'Legal holds are placed and lifted by the legal and compliance side (auditors) or admins, without a restart (POST/DELETE /retention/holds, POST /retention/sweep); operators may not lift a hold.',
  },
};

/** True when `role` may perform `action`. */
export function can(role: Role, action: Action): boolean {
  return PERMISSIONS[action].roles.includes(role);
}

/** Markdown table of the matrix, used to generate and check docs/permissions.md. */
export function renderPermissionTable(): string {
  const header = `| Action | ${ROLES.join(' | ')} | Source |\n|---|${ROLES.map(() => '---').join('|')}|---|`;
  const rows = ACTIONS.map((action) => {
    const rule = PERMISSIONS[action];
    const cells = ROLES.map((r) => (rule.roles.includes(r) ? 'yes' : '-'));
    const source = rule.source === 'spec' ? 'spec' : `decision: ${rule.why ?? ''}`;
    return `| ${action} | ${cells.join(' | ')} | ${source} |`;
  });
  return [header, ...rows].join('\n');
}
