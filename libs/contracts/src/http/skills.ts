import { Type, type Static } from 'typebox';

/** HTTP bodies of the skill routes (spec §Skill, §Skills; docs/skills.md). */

/**
 * How SkillInfo and SkillDetail show a SKILL.md `runtime`: capitalised like the spec's example
 * (`Wasm`), `promptonly` as `PromptOnly`. Only `PromptOnly` and `Starlark` skills install.
 */
export const SKILL_RUNTIME_NAMES = {
  python: 'Python',
  wasm: 'Wasm',
  node: 'Node',
  shell: 'Shell',
  builtin: 'Builtin',
  promptonly: 'PromptOnly',
  starlark: 'Starlark',
} as const;

export const SkillRuntimeName = Type.Union(
  [
    Type.Literal('Python'),
    Type.Literal('Wasm'),
    Type.Literal('Node'),
    Type.Literal('Shell'),
    Type.Literal('Builtin'),
    Type.Literal('PromptOnly'),
    Type.Literal('Starlark'),
  ],
  { description: 'The SKILL.md runtime, capitalised: PromptOnly or Starlark (the runtimes that install).' },
);
export type SkillRuntimeName = Static<typeof SkillRuntimeName>;

export const SkillInfo = Type.Object({
  id: Type.String({ description: 'The package name (DECISIONS D9).' }),
  name: Type.String(),
  version: Type.String(),
  tools: Type.Array(Type.String(), { description: 'Tool names.' }),
  runtime: SkillRuntimeName,
  bundled: Type.Boolean({ description: 'Always false in the list: bundled skills are never listed.' }),
});
export type SkillInfo = Static<typeof SkillInfo>;

export const SkillList = Type.Object({ skills: Type.Array(SkillInfo) });
export type SkillList = Static<typeof SkillList>;

export const SkillToolView = Type.Object({
  name: Type.String(),
  description: Type.String({ description: "As SKILL.md says; else the skill's description." }),
  input_schema: Type.Record(Type.String(), Type.Unknown(), { description: 'JSON Schema of the arguments; default {type: object}.' }),
});
export type SkillToolView = Static<typeof SkillToolView>;

export const SkillRequirements = Type.Object(
  {
    interpreter: Type.Union([Type.Literal('starlark'), Type.Null()], { description: 'What runs its tools; null for PromptOnly.' }),
    interpreter_available: Type.Boolean({ description: 'Whether this node has that interpreter (always true for PromptOnly).' }),
    entry: Type.Union([Type.String(), Type.Null()], { description: 'SKILL.md `entry`: the file name Starlark errors show.' }),
  },
  { description: 'What the skill needs to run (docs/skills.md).' },
);
export type SkillRequirements = Static<typeof SkillRequirements>;

export const SkillDetail = Type.Object({
  id: Type.String(),
  name: Type.String(),
  version: Type.String(),
  description: Type.String(),
  tools: Type.Array(SkillToolView),
  runtime: SkillRuntimeName,
  requirements: SkillRequirements,
  bundled: Type.Boolean({ description: 'Beyond the spec: true for a skill shipped with the platform.' }),
});
export type SkillDetail = Static<typeof SkillDetail>;

export const SkillInstallBody = Type.Object(
  { path: Type.String({ minLength: 1, description: 'Absolute path of a local skill package directory.' }) },
  { additionalProperties: false },
);
export type SkillInstallBody = Static<typeof SkillInstallBody>;

export const SkillInstallResult = Type.Object({ id: Type.String({ description: 'The skill id: its package name.' }) });
export type SkillInstallResult = Static<typeof SkillInstallResult>;

export const SkillIdParams = Type.Object({ id: Type.String({ description: 'Skill id (package name).' }) });
export type SkillIdParams = Static<typeof SkillIdParams>;
