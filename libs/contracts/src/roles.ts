import { Type } from 'typebox';

/** The six roles of spec §Authentication, in the order the docs list them. */
export const ROLES = ['admin', 'operator', 'developer', 'viewer', 'service', 'auditor'] as const;
export const Role = Type.Enum(ROLES);
export type Role = (typeof ROLES)[number];

/**
 * Every permission action a route can require. The spec names most of them; the rest
 * (triggers, webhooks, logs, providers, catalog reads) are ours and documented in
 * docs/permissions.md, generated from the matrix in `@agent-platform/domain`.
 */
export const ACTIONS = [
  'KeyManagement',
  'AuditWrite',
  'VaultRead',
  'VaultManage',
  'SecurityAudit',
  'SecurityRead',
  'AuditCheckpoint',
  'AgentInvoke',
  'WorkflowRun',
  'MemoryRead',
  'MemoryWrite',
  'AgentStatus',
  'WorkflowList',
  'WorkflowStatus',
  'ChannelRead',
  'IntegrationRead',
  'BudgetRead',
  'LicenceRead',
  'ChannelManage',
  'IntegrationManage',
  'IntegrationInstall',
  'ScheduleCreate',
  'ScheduleUpdate',
  'ScheduleDelete',
  'SkillInstall',
  'AgentList',
  'AgentStart',
  'AgentStop',
  'AgentSendMessage',
  'AgentUpdate',
  'SessionRead',
  'CompetencyInstall',
  'CompetencyManage',
  'CompetencyEquip',
  'ConfigRead',
  'ConfigReload',
  'DaemonShutdown',
  'TemplateRead',
  'BackupCreate',
  'BackupList',
  'BackupRestore',
  'BackupRestoreForeign',
  'ComplianceRead',
  'TriggerRead',
  'TriggerManage',
  'WebhookRead',
  'WebhookManage',
  'LogRead',
  'StatusRead',
  'ProviderRead',
  'MetricsRead',
  'RevocationOverride',
  'ComplianceAttest',
  'RetentionRead',
  'RetentionManage',
] as const;
export type Action = (typeof ACTIONS)[number];
