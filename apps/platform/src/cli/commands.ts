import { auditCommand } from './audit-command.ts';
import { backupCommand } from './backup-command.ts';
import type { CommandGroup } from './command.ts';
import { licenceCommand } from './licence-command.ts';
import { packageCommand } from './package-command.ts';
import { registryCommand } from './registry-command.ts';

/** Every command group of the `agent-platform` CLI, by the word that selects it. Add a group with one line. */
export const COMMANDS: Readonly<Record<string, CommandGroup>> = {
  package: packageCommand,
  licence: licenceCommand,
  registry: registryCommand,
  audit: auditCommand,
  backup: backupCommand,
};
