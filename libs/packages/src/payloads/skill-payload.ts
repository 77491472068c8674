import {
  SKILL_RUNTIMES,
  type SkillPayload,
  type SkillRuntime,
  type SkillTool,
} from '@agent-platform/contracts';
import {
  checkKeys,
  describeValue,
  isTable,
  pathOf,
  readArray,
  readString,
  readTable,
  typeProblem,
  type Table,
} from '../fields.ts';
import { checkLicense } from '../manifest.ts';
import { BODY, countingProblems, type FileProblems } from '../problems.ts';
import { isVersion } from '../semver.ts';
import { decodeText, splitFrontmatter } from './payload-text.ts';

const KEYS = ['description', 'version', 'license', 'tools', 'runtime', 'entry', 'config'];
/** Runtimes that run from the markdown body or from code built into the platform: no entry file. */
const NO_ENTRY: readonly SkillRuntime[] = ['promptonly', 'builtin'];

/**
 * SKILL.md. Unlike AGENT.md and COMPETENCY.md, the spec does not say that unknown fields are
 * rejected, and SKILL.md files are commonly shared between tools that add their own keys
 * (`name`, `metadata`, ...): an unknown field is a warning, not a problem, and is dropped.
 */
export function checkSkillPayload(
  bytes: Uint8Array,
  problems: FileProblems,
  packageVersion?: string,
): SkillPayload | undefined {
  const p = countingProblems(problems);
  const text = decodeText(bytes, p);
  const doc = text === undefined ? undefined : splitFrontmatter(text, p);
  if (doc === undefined) return undefined;
  const { data, body } = doc;
  for (const key of Object.keys(data)) {
    if (!KEYS.includes(key)) p.warn(pathOf('', key), 'unknown-key', 'unknown SKILL.md field; ignored');
  }
  const runtime = readRuntime(p, data);
  const payload: SkillPayload = {
    description: readString(p, data, 'description', '', { required: true, nonBlank: true }) ?? '',
    tools: readTools(p, data),
    runtime: runtime ?? 'promptonly',
    config: readTable(p, data, 'config', '') ?? {},
    body,
  };
  const version = readString(p, data, 'version', '');
  if (version !== undefined && !isVersion(version))
    p.add(
      'version',
      'semver',
      `must be a semver version such as 1.2.3 (got ${JSON.stringify(version.slice(0, 40))})`,
    );
  else if (version !== undefined) payload.version = version;
  if (
    version !== undefined &&
    packageVersion !== undefined &&
    isVersion(version) &&
    version !== packageVersion
  ) {
    p.warn(
      'version',
      'version-mismatch',
      `differs from package.version ${packageVersion}; the package version is the one installed`,
    );
  }
  const license = checkLicense(p, data, '');
  if (license !== undefined) payload.license = license;
  const entry = readString(p, data, 'entry', '', { nonBlank: true });
  if (entry !== undefined) payload.entry = entry;
  if (runtime !== undefined && !NO_ENTRY.includes(runtime) && data.entry === undefined) {
    p.add('entry', 'entry-required', `a ${runtime} skill needs an entry (the file or function it runs)`);
  }
  if (runtime === 'promptonly' && body === '')
    p.add(BODY, 'body-required', 'a promptonly skill is its body: it must not be empty');
  return p.count() === 0 ? payload : undefined;
}

/** `runtime`: matched case-insensitively (`Wasm` as SkillInfo shows it), normalized to lower case. */
function readRuntime(p: FileProblems, data: Table): SkillRuntime | undefined {
  const runtime = readString(p, data, 'runtime', '');
  if (runtime === undefined) return data.runtime === undefined ? 'promptonly' : undefined;
  const normalized = runtime.toLowerCase();
  if ((SKILL_RUNTIMES as readonly string[]).includes(normalized)) return normalized as SkillRuntime;
  p.add(
    'runtime',
    'skill-runtime',
    `must be one of ${SKILL_RUNTIMES.join(', ')} (got ${JSON.stringify(runtime.slice(0, 40))})`,
  );
  return undefined;
}

/** `tools`: tool names, or `{name, description?, input_schema?}` tables; names unique. */
function readTools(p: FileProblems, data: Table): SkillTool[] {
  const tools: SkillTool[] = [];
  (readArray(p, data, 'tools', '') ?? []).forEach((item, i) => {
    const at = pathOf('tools', i);
    const tool = readTool(p, item, at);
    if (tool === undefined) return;
    if (tools.some((t) => t.name === tool.name))
      p.add(at, 'duplicate-tool', `tool '${tool.name}' is listed more than once`);
    else tools.push(tool);
  });
  return tools;
}

function readTool(p: FileProblems, item: unknown, at: string): SkillTool | undefined {
  if (typeof item === 'string') {
    if (item.trim() !== '') return { name: item };
    p.add(at, 'non-blank', 'must not be blank');
    return undefined;
  }
  if (!isTable(item)) {
    typeProblem(p, at, 'a tool name or a {name, description, input_schema} table', item);
    return undefined;
  }
  checkKeys(p, item, ['name', 'description', 'input_schema'], at);
  const name = readString(p, item, 'name', at, { required: true, nonBlank: true });
  const description = readString(p, item, 'description', at);
  const schema = item.input_schema;
  if (schema !== undefined && !isTable(schema))
    p.add(pathOf(at, 'input_schema'), 'type', `must be a JSON Schema object (got ${describeValue(schema)})`);
  if (name === undefined) return undefined;
  const tool: SkillTool = { name };
  if (description !== undefined) tool.description = description;
  if (isTable(schema)) tool.input_schema = schema;
  return tool;
}
