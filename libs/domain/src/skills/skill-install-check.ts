import type { SkillPayload, SkillRuntime } from '@agent-platform/contracts';
import { Errors } from '../errors/errors.ts';
import type { PlannedPackage } from '../catalog/install-plan.ts';
import { bundledSkills } from './bundled-skills.ts';
import { starlarkCode } from './starlark-code.ts';
import { describeStarlarkFailure, type StarlarkLimits, type StarlarkRunner } from './starlark-runner.ts';

/** Spec §Package manifests SKILL.md: "only promptonly and starlark compile". */
export const INSTALLABLE_RUNTIMES: readonly SkillRuntime[] = ['promptonly', 'starlark'];

/** How a machine without the interpreter gets it (README "Skills", docs/skills.md). */
export const ENABLE_STARLARK_HINT = 'apt-get install golang-go golang-starlark-dev && npm install';

export interface SkillCheckDeps {
  /** The Starlark interpreter; null on a machine that has not built it. */
  starlark: StarlarkRunner | null;
  limits: () => StarlarkLimits;
}

/**
 * Checks every skill of an install plan before anything is written (docs/skills.md "Install
 * checks"), so a refused skill leaves the catalog unchanged, for POST /skills/install and POST
 * /catalog/install alike.
 */
export async function checkPlannedSkills(plan: readonly PlannedPackage[], deps: SkillCheckDeps): Promise<void> {
  // An unchanged package (same version already installed) is not written again, so not checked.
  for (const { pkg, name, action } of plan)
    if (pkg.payload.file === 'SKILL.md' && action !== 'unchanged') await checkSkill(name, pkg.payload.data, deps);
}

export async function checkSkill(name: string, payload: SkillPayload, deps: SkillCheckDeps): Promise<void> {
  if ((await bundledSkills()).has(name))
    throw Errors.conflict(`skill ${name} is a bundled skill of the platform; give the package another name`, { skill: name });
  await checkSkillRuntime(name, payload, deps);
}

/** What a skill's runtime checks read: a SKILL.md payload, or the record made from one. */
export type CheckedSkill = Pick<SkillPayload, 'runtime' | 'tools' | 'body'> & { entry?: string | null | undefined };

/**
 * The runtime checks alone: an installable runtime; for starlark, the interpreter, the code
 * block, code that compiles and runs its top level within the limits, and one `def <tool>(args)`
 * per tool. (Bundled skills pass these too: a test checks them.)
 */
export async function checkSkillRuntime(name: string, skill: CheckedSkill, deps: SkillCheckDeps): Promise<void> {
  const { runtime } = skill;
  if (!INSTALLABLE_RUNTIMES.includes(runtime))
    throw Errors.validation(
      `skill ${name}: runtime ${runtime} is not supported; only promptonly and starlark skills install`,
      { skill: name, runtime, supported: INSTALLABLE_RUNTIMES },
    );
  if (runtime === 'starlark') await checkStarlark(name, skill, deps);
}

async function checkStarlark(name: string, payload: CheckedSkill, deps: SkillCheckDeps): Promise<void> {
  if (deps.starlark === null)
    throw Errors.catalog(
      `skill ${name} is a starlark skill, and this installation has no Starlark interpreter; to enable starlark skills run: ${ENABLE_STARLARK_HINT}`,
      { skill: name, runtime: 'starlark', enable: ENABLE_STARLARK_HINT },
    );
  const entry = payload.entry ?? 'tools.star';
  if (payload.tools.length === 0)
    throw Errors.validation(`skill ${name}: a starlark skill lists its tools in SKILL.md \`tools\`; it lists none`, { skill: name });
  const code = starlarkCode(payload.body);
  if (!code.ok) throw Errors.validation(`skill ${name}: ${code.message}`, { skill: name });
  const outcome = await deps.starlark.check(code.source, entry, deps.limits());
  if (!outcome.ok) {
    const { kind, message, line, column } = outcome.error;
    if (kind === 'crashed') throw Errors.internal(`skill ${name}: the Starlark interpreter failed: ${message}`);
    throw Errors.validation(`skill ${name}: ${describeStarlarkFailure(entry, outcome.error)}`, {
      skill: name,
      file: entry,
      kind,
      ...(line === undefined ? {} : { line }),
      ...(column === undefined ? {} : { column }),
    });
  }
  const functions = new Map(outcome.value.functions.map((f) => [f.name, f.params]));
  const missing = payload.tools.map((t) => t.name).filter((tool) => !functions.has(tool));
  if (missing.length > 0)
    throw Errors.validation(
      `skill ${name}: ${entry} defines no top-level function for tool${missing.length > 1 ? 's' : ''} ${missing.join(', ')} (each tool is \`def <name>(args)\`)`,
      { skill: name, file: entry, missing },
    );
  const wrong = payload.tools.map((t) => t.name).filter((tool) => functions.get(tool) !== 1);
  if (wrong.length > 0)
    throw Errors.validation(
      `skill ${name}: in ${entry}, ${wrong.join(', ')} must take exactly one parameter, the arguments dict: \`def ${wrong[0]}(args)\``,
      { skill: name, file: entry, functions: wrong },
    );
}
