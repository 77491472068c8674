import type { AgentTemplatePayload } from '@agent-platform/contracts';
import { checkKeys, readString, readStringArray } from '../fields.ts';
import { BODY, countingProblems, type FileProblems } from '../problems.ts';
import { readPackageNames } from './package-refs.ts';
import { decodeText, splitFrontmatter } from './payload-text.ts';

const KEYS = ['description', 'competencies', 'allow_skill_tools', 'allow_integration_tools'] as const;
const FORBIDDEN = {
  model: 'agents carry no model: every agent uses the platform default ([models] default)',
  triggers:
    'agents carry no triggers: create schedules, triggers or channel bindings on the platform instead',
};

/** AGENT.md: frontmatter (unknown fields rejected) and a non-empty body that is the system prompt. */
export function checkAgentPayload(
  bytes: Uint8Array,
  problems: FileProblems,
): AgentTemplatePayload | undefined {
  const p = countingProblems(problems);
  const text = decodeText(bytes, p);
  const doc = text === undefined ? undefined : splitFrontmatter(text, p);
  if (doc === undefined) return undefined;
  const { data, body } = doc;
  checkKeys(p, data, KEYS, '', FORBIDDEN);
  const description = readString(p, data, 'description', '', { required: true, nonBlank: true });
  const payload: AgentTemplatePayload = {
    description: description ?? '',
    competencies: readPackageNames(p, data, 'competencies'),
    allow_skill_tools: readStringArray(p, data, 'allow_skill_tools', '', { nonBlank: true }),
    allow_integration_tools: readStringArray(p, data, 'allow_integration_tools', '', { nonBlank: true }),
    system_prompt: body,
  };
  if (body === '')
    p.add(BODY, 'body-required', 'the body after the frontmatter is the system prompt and must not be empty');
  return p.count() === 0 ? payload : undefined;
}
