/**
 * Test support for the catalog and lifecycle tests: writes small valid packages (DECISIONS D4
 * layout) into a directory, so that installs read real package directories.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface PackageSpec {
  type: 'skill' | 'competency' | 'agent-template' | 'workflow-template' | 'integration' | 'contract';
  name: string;
  version?: string;
  title?: string;
  dependencies?: Record<string, string>;
  /** integration: the contracts it implements. */
  implements?: string[];
  /** competency: its skills (default: none listed in dependencies -> `[placeholder-skill]`) and contracts. */
  skills?: string[];
  contracts?: string[];
  /** agent-template: equipped competencies; workflow-template: agents_required. */
  competencies?: string[];
  agents?: string[];
  /** The markdown body of a skill, competency or agent template. */
  body?: string;
  /**
   * skill: the SKILL.md frontmatter lines (default: a promptonly skill). competency: more
   * frontmatter lines, as YAML (`settings`, `schedule`, `schedule_action`, ...).
   */
  frontmatter?: string;
}

export async function writePackage(root: string, spec: PackageSpec): Promise<string> {
  const dir = join(root, spec.name);
  await mkdir(join(dir, 'payload'), { recursive: true });
  await writeFile(join(dir, 'package.toml'), manifest(spec));
  const [file, text] = payload(spec);
  await writeFile(join(dir, 'payload', file), text);
  return dir;
}

function manifest(spec: PackageSpec): string {
  const lines = [
    '[package]',
    `type = "${spec.type}"`,
    `name = "${spec.name}"`,
    `title = "${spec.title ?? `Title of ${spec.name}`}"`,
    `version = "${spec.version ?? '1.0.0'}"`,
    `description = "The ${spec.type} ${spec.name}."`,
    'min_platform_version = "0.1.0"',
    '',
    '[dependencies]',
    ...Object.entries(spec.dependencies ?? {}).map(([name, constraint]) => `${name} = "${constraint}"`),
  ];
  for (const contract of spec.implements ?? [])
    lines.push('', `[implements.${contract}]`, 'version = "^1.0.0"', 'tool_map = {}');
  return `${lines.join('\n')}\n`;
}

function list(items: readonly string[] | undefined): string {
  return `[${(items ?? []).join(', ')}]`;
}

function payload(spec: PackageSpec): [string, string] {
  const body = spec.body ?? `Body of ${spec.name}.`;
  switch (spec.type) {
    case 'skill':
      return ['SKILL.md', `---\n${spec.frontmatter ?? 'description: A skill.\nruntime: promptonly'}\n---\n${body}\n`];
    case 'competency':
      return [
        'COMPETENCY.md',
        `---\ndescription: A competency.\nskills: ${list(spec.skills ?? ['placeholder-skill'])}\ncontracts: ${list(spec.contracts)}\n${spec.frontmatter === undefined ? '' : `${spec.frontmatter.trim()}\n`}---\n${body}\n`,
      ];
    case 'agent-template':
      return [
        'AGENT.md',
        `---\ndescription: An agent.\ncompetencies: ${list(spec.competencies)}\n---\n${body}\n`,
      ];
    case 'integration':
      return ['mcp.json', JSON.stringify({ command: 'node', args: ['server.js'] })];
    case 'contract':
      return [
        'CONTRACT.json',
        JSON.stringify({ tools: [{ name: 'create_claim', input_schema: { type: 'object' } }] }),
      ];
    case 'workflow-template':
      return [
        'workflow.json',
        JSON.stringify({
          description: 'A workflow.',
          agents_required: spec.agents ?? [],
          steps: (spec.agents ?? ['someone']).map((agent, i) => ({
            name: `step-${i}`,
            agent: { ByName: agent },
          })),
        }),
      ];
  }
}
