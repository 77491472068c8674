import type { SkillRecord } from '../catalog/catalog-records.ts';
import type { ToolBinding } from '../models/tool-loop.ts';
import { ENABLE_STARLARK_HINT } from './skill-install-check.ts';
import { skillToolViews } from './skill-views.ts';
import { starlarkCode } from './starlark-code.ts';
import {
  DEFAULT_STARLARK_LIMITS,
  describeStarlarkFailure,
  type StarlarkLimits,
  type StarlarkRunner,
} from './starlark-runner.ts';

/**
 * The tools of a starlark skill (installed or bundled) as bindings for the model tool loop
 * (`runToolLoop`, docs/skills.md "Tools"): one per SKILL.md `tools` entry, named and described
 * as GET /skills/{id} shows it. `execute` runs `def <tool>(args)` of the skill's code on the
 * model's arguments within `limits` and answers the result as JSON text; a failure (a Starlark
 * error, the step or time limit) throws a message naming the file and line, which the tool loop
 * reports to the model as a failed call. A promptonly skill has no tools: [].
 *
 * `runner` null (this process has no interpreter): the bindings still exist, so the model sees
 * the tools, and each call fails saying how to enable starlark.
 */
export function starlarkToolBindings(
  skill: SkillRecord,
  runner: StarlarkRunner | null,
  limits: StarlarkLimits = DEFAULT_STARLARK_LIMITS,
): ToolBinding[] {
  if (skill.runtime !== 'starlark') return [];
  const code = starlarkCode(skill.body);
  const entry = skill.entry ?? 'tools.star';
  return skillToolViews(skill).map((spec) => ({
    skill_id: skill.id,
    spec,
    async execute(args, options) {
      if (runner === null)
        throw new Error(`this process has no Starlark interpreter; to enable starlark skills run: ${ENABLE_STARLARK_HINT}`);
      // Checked at install; a skill that slipped past (an older install) fails each call clearly.
      if (!code.ok) throw new Error(`skill ${skill.id}: ${code.message}`);
      const outcome = await runner.call(code.source, entry, spec.name, JSON.stringify(args), {
        ...limits,
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      });
      if (outcome.ok) return outcome.value;
      throw new Error(describeStarlarkFailure(entry, outcome.error));
    },
  }));
}
