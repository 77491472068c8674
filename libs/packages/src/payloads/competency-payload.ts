import type { CompetencyPayload } from '@agent-platform/contracts';
import { CronExpressionParser } from 'cron-parser';
import { checkKeys, readArray, readString, readStringArray, type Table } from '../fields.ts';
import { BODY, countingProblems, type FileProblems } from '../problems.ts';
import { checkIoItems, checkSettings } from './competency-items.ts';
import { readPackageNames } from './package-refs.ts';
import { decodeText, splitFrontmatter } from './payload-text.ts';

const KEYS = [
  'description',
  'skills',
  'tools',
  'contracts',
  'integrations',
  'settings',
  'inputs',
  'outputs',
  'schedule',
  'schedule_action',
] as const;
const IDENTITY =
  'a competency is identified by its package name: id, name and category come from package.toml';
const FORBIDDEN = { id: IDENTITY, name: IDENTITY, category: IDENTITY };

/** COMPETENCY.md: frontmatter (unknown fields rejected) and a non-empty body that becomes the system prompt. */
export function checkCompetencyPayload(
  bytes: Uint8Array,
  problems: FileProblems,
): CompetencyPayload | undefined {
  const p = countingProblems(problems);
  const text = decodeText(bytes, p);
  const doc = text === undefined ? undefined : splitFrontmatter(text, p);
  if (doc === undefined) return undefined;
  const { data, body } = doc;
  checkKeys(p, data, KEYS, '', FORBIDDEN);
  const payload: CompetencyPayload = {
    description: readString(p, data, 'description', '', { required: true, nonBlank: true }) ?? '',
    skills: checkSkills(p, data),
    tools: readStringArray(p, data, 'tools', '', { nonBlank: true }),
    contracts: readPackageNames(p, data, 'contracts'),
    integrations: readPackageNames(p, data, 'integrations'),
    settings: checkSettings(p, readArray(p, data, 'settings', '') ?? []),
    inputs: checkIoItems(p, readArray(p, data, 'inputs', '') ?? [], 'inputs'),
    outputs: checkIoItems(p, readArray(p, data, 'outputs', '') ?? [], 'outputs'),
    system_prompt: body,
  };
  checkSchedule(p, data, payload);
  if (body === '')
    p.add(
      BODY,
      'body-required',
      'the body after the frontmatter becomes the system prompt and must not be empty',
    );
  return p.count() === 0 ? payload : undefined;
}

function checkSkills(p: FileProblems, data: Table): string[] {
  const skills = readPackageNames(p, data, 'skills');
  if (data.skills === undefined)
    p.add('skills', 'required', 'required key is missing: a competency lists at least one skill');
  else if (Array.isArray(data.skills) && data.skills.length === 0)
    p.add('skills', 'min-items', 'must list at least one skill');
  return skills;
}

/** `schedule` is a 5- or 6-field cron expression (D9) and comes with the `schedule_action` it runs. */
function checkSchedule(p: FileProblems, data: Table, payload: CompetencyPayload): void {
  const schedule = readString(p, data, 'schedule', '', { nonBlank: true });
  const action = readString(p, data, 'schedule_action', '', { nonBlank: true });
  if (schedule !== undefined) {
    const fault = cronFault(schedule);
    if (fault !== undefined) p.add('schedule', 'cron', fault);
    else payload.schedule = schedule.trim();
    if (data.schedule_action === undefined)
      p.add('schedule_action', 'schedule-needs-action', 'a schedule needs a schedule_action to run');
  }
  if (action !== undefined) {
    if (data.schedule === undefined)
      p.add('schedule_action', 'action-needs-schedule', 'schedule_action has no schedule to run it');
    payload.schedule_action = action;
  }
}

function cronFault(expr: string): string | undefined {
  const fields = expr.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) {
    return `must be a cron expression of 5 fields (or 6 with leading seconds), got ${fields.length}`;
  }
  try {
    CronExpressionParser.parse(expr.trim(), { tz: 'UTC' });
    return undefined;
  } catch (error) {
    return `not a valid cron expression: ${error instanceof Error ? error.message : String(error)}`;
  }
}
