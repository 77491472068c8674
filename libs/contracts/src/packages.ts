import { Type, type Static, type TLiteral, type TUnion } from 'typebox';
import { WorkflowStep } from './workflow-step.ts';

/**
 * Packages (spec §Package manifests, DECISIONS D4): the normalized shapes that
 * `@agent-platform/packages` produces from `package.toml` and the payload file. These schemas
 * describe the result after every rule passed; the rules themselves, with their rule ids, live
 * in that library and docs/packages.md.
 */
const strict = { additionalProperties: false } as const;
const Strings = () => Type.Array(Type.String());
const StringTable = () => Type.Record(Type.String(), Type.String());
/** A union of string literals from a constant tuple, so that the list and the schema cannot drift. */
type LiteralTuple<T extends readonly string[]> = { -readonly [K in keyof T]: TLiteral<T[K]> };
function Literals<const T extends readonly string[]>(values: T): TUnion<LiteralTuple<T>> {
  return Type.Union(values.map((v) => Type.Literal(v))) as TUnion<LiteralTuple<T>>;
}

/** Exactly six; there is no tool type. */
export const PACKAGE_TYPES = [
  'skill',
  'competency',
  'agent-template',
  'workflow-template',
  'integration',
  'contract',
] as const;
export const PackageType = Literals(PACKAGE_TYPES);
export type PackageType = (typeof PACKAGE_TYPES)[number];

/** A package name: the package's sole identity (and the id of skills, competencies, integrations, contracts: D9). */
export const PACKAGE_NAME_PATTERN = '^[a-z0-9][a-z0-9-]*[a-z0-9]$';

export const PackageMetadata = Type.Object(
  {
    repository: Type.Optional(Type.String()),
    homepage: Type.Optional(Type.String()),
    keywords: Strings(),
    /** Taxonomy paths, e.g. `insurance/claims`. */
    categories: Strings(),
    /** ISO 3166-1 alpha-2, upper case; empty = every region. */
    regions: Strings(),
  },
  strict,
);
export type PackageMetadata = Static<typeof PackageMetadata>;

export const PackageSection = Type.Object(
  {
    type: PackageType,
    name: Type.String({ pattern: PACKAGE_NAME_PATTERN, minLength: 3, maxLength: 64 }),
    title: Type.String({ minLength: 1 }),
    version: Type.String(),
    description: Type.String({ minLength: 1, maxLength: 500 }),
    license: Type.Optional(Type.String({ minLength: 1 })),
    min_platform_version: Type.String(),
    metadata: PackageMetadata,
  },
  strict,
);
export type PackageSection = Static<typeof PackageSection>;

/** `[standards]`: skill and integration packages only. */
export const PackageStandards = Type.Object(
  {
    mcp_compatible: Type.Optional(Type.Boolean()),
    openapi_spec: Type.Optional(Type.String()),
    /** Beyond the spec (integrations): its server de-duplicates on the idempotency key it is sent (docs/tools.md). */
    idempotent_keys: Type.Optional(Type.Boolean()),
  },
  strict,
);
export type PackageStandards = Static<typeof PackageStandards>;

/** `[implements.<contract>]`: how an integration maps a contract's tools and fields to its own. */
export const ContractImplementation = Type.Object(
  {
    /** Semver constraint on the contract package's version. */
    version: Type.String(),
    /** Contract tool name -> native tool name. */
    tool_map: StringTable(),
    /** Contract tool name -> (contract field -> native field). */
    field_map: Type.Record(Type.String(), StringTable()),
  },
  strict,
);
export type ContractImplementation = Static<typeof ContractImplementation>;

export const PackageSigning = Type.Object(
  { content_hash: Type.String({ pattern: '^sha256:[0-9a-f]{64}$' }) },
  strict,
);
export type PackageSigning = Static<typeof PackageSigning>;

/** `package.toml`, normalized: absent optional tables become empty. */
export const PackageManifest = Type.Object(
  {
    package: PackageSection,
    /** Package name -> semver constraint; all mandatory. */
    dependencies: StringTable(),
    standards: Type.Optional(PackageStandards),
    implements: Type.Record(Type.String(), ContractImplementation),
    signing: Type.Optional(PackageSigning),
  },
  strict,
);
export type PackageManifest = Static<typeof PackageManifest>;

/**
 * One fault found in a package. `rule` is a stable id (docs/packages.md lists them all);
 * `field` is a dotted path inside `file`, `(file)` for the file as a whole, `(body)` for the
 * markdown body.
 */
export const PackageProblem = Type.Object({
  file: Type.String(),
  field: Type.String(),
  rule: Type.String(),
  message: Type.String(),
});
export type PackageProblem = Static<typeof PackageProblem>;

/** AGENT.md: frontmatter plus the body as the system prompt. */
export const AgentTemplatePayload = Type.Object(
  {
    description: Type.String({ minLength: 1 }),
    /** Competency package names. */
    competencies: Strings(),
    allow_skill_tools: Strings(),
    allow_integration_tools: Strings(),
    system_prompt: Type.String({ minLength: 1 }),
  },
  strict,
);
export type AgentTemplatePayload = Static<typeof AgentTemplatePayload>;

export const SETTING_TYPES = ['Select', 'Text', 'Toggle', 'Number'] as const;
export const CompetencySetting = Type.Object(
  {
    key: Type.String({ minLength: 1 }),
    label: Type.String({ minLength: 1 }),
    description: Type.Optional(Type.String()),
    type: Literals(SETTING_TYPES),
    default: Type.Optional(Type.Union([Type.String(), Type.Number(), Type.Boolean()])),
    values: Type.Optional(Strings()),
  },
  strict,
);
export type CompetencySetting = Static<typeof CompetencySetting>;

export const ValueRange = Type.Object(
  { min: Type.Optional(Type.Number()), max: Type.Optional(Type.Number()) },
  strict,
);
export type ValueRange = Static<typeof ValueRange>;

/** An item of a competency's `inputs` or `outputs`. */
export const CompetencyIo = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    type: Type.String({ minLength: 1 }),
    required: Type.Optional(Type.Boolean()),
    values: Type.Optional(Strings()),
    range: Type.Optional(ValueRange),
  },
  strict,
);
export type CompetencyIo = Static<typeof CompetencyIo>;

export const CompetencyPayload = Type.Object(
  {
    description: Type.String({ minLength: 1 }),
    /** Skill package names; at least one. */
    skills: Type.Array(Type.String(), { minItems: 1 }),
    tools: Strings(),
    contracts: Strings(),
    integrations: Strings(),
    settings: Type.Array(CompetencySetting),
    inputs: Type.Array(CompetencyIo),
    outputs: Type.Array(CompetencyIo),
    /** Cron expression, 5 or 6 fields (D9); needs `schedule_action`. */
    schedule: Type.Optional(Type.String()),
    /** The message the competency's agent is given on each schedule fire. */
    schedule_action: Type.Optional(Type.String()),
    system_prompt: Type.String({ minLength: 1 }),
  },
  strict,
);
export type CompetencyPayload = Static<typeof CompetencyPayload>;

export const SKILL_RUNTIMES = [
  'python',
  'wasm',
  'node',
  'shell',
  'builtin',
  'promptonly',
  'starlark',
] as const;
export const SkillRuntime = Literals(SKILL_RUNTIMES);
export type SkillRuntime = (typeof SKILL_RUNTIMES)[number];

export const SkillTool = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    description: Type.Optional(Type.String()),
    input_schema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  strict,
);
export type SkillTool = Static<typeof SkillTool>;

export const SkillPayload = Type.Object(
  {
    description: Type.String({ minLength: 1 }),
    version: Type.Optional(Type.String()),
    license: Type.Optional(Type.String()),
    tools: Type.Array(SkillTool),
    runtime: SkillRuntime,
    entry: Type.Optional(Type.String()),
    config: Type.Record(Type.String(), Type.Unknown()),
    /** The markdown body: the instructions of a promptonly skill. */
    body: Type.String(),
  },
  strict,
);
export type SkillPayload = Static<typeof SkillPayload>;

export const WorkflowTemplatePayload = Type.Object(
  {
    description: Type.String({ minLength: 1 }),
    /** Agent-template package names, installed before the workflow. */
    agents_required: Strings(),
    steps: Type.Array(WorkflowStep, { minItems: 1 }),
    /** Seeds for `{{name}}` placeholders. */
    variables: StringTable(),
    /**
     * Beyond the spec: the workflow type its runs count under (licence transaction budgets, value
     * events); default the package name (docs/workflows.md "Licence").
     */
    workflow_type: Type.Optional(Type.String({ minLength: 1 })),
  },
  strict,
);
export type WorkflowTemplatePayload = Static<typeof WorkflowTemplatePayload>;

/** mcp.json: a stdio server (`command`) or a remote one (`url`). */
export const McpPayload = Type.Object(
  {
    command: Type.Optional(Type.String({ minLength: 1 })),
    args: Strings(),
    env: StringTable(),
    url: Type.Optional(Type.String()),
  },
  strict,
);
export type McpPayload = Static<typeof McpPayload>;

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export const AdapterOperation = Type.Object(
  {
    /** The native tool name this operation is exposed as. */
    name: Type.String({ minLength: 1 }),
    description: Type.Optional(Type.String()),
    /** REST only. */
    method: Type.Optional(Literals(HTTP_METHODS)),
    /** REST only: starts with `/`, `{field}` placeholders are filled from the input. */
    path: Type.Optional(Type.String()),
    /** SOAP only. */
    soap_action: Type.Optional(Type.String()),
    input_schema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    output_schema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  strict,
);
export type AdapterOperation = Static<typeof AdapterOperation>;

/** adapter.json: a REST or SOAP service described as a set of operations (docs/packages.md). */
export const AdapterPayload = Type.Object(
  {
    kind: Type.Union([Type.Literal('rest'), Type.Literal('soap')]),
    base_url: Type.String(),
    /** SOAP only, optional: where the service's WSDL lives. */
    wsdl_url: Type.Optional(Type.String()),
    operations: Type.Array(AdapterOperation, { minItems: 1 }),
  },
  strict,
);
export type AdapterPayload = Static<typeof AdapterPayload>;

export const ContractTool = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    description: Type.Optional(Type.String()),
    input_schema: Type.Record(Type.String(), Type.Unknown()),
    output_schema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    /**
     * Beyond the spec: the tool only reads. Absent or false: it may change a system of record, and
     * a workflow step journals its calls (docs/tools.md "Escalated").
     */
    read_only: Type.Optional(Type.Boolean()),
  },
  strict,
);
export type ContractTool = Static<typeof ContractTool>;

export const ContractPayload = Type.Object(
  {
    schema_version: Type.String({ default: '1' }),
    tools: Type.Array(ContractTool, { minItems: 1 }),
  },
  strict,
);
export type ContractPayload = Static<typeof ContractPayload>;

/** One `[[packages]]` entry of a COLLECTION.toml: a package pinned at one version. */
export const CollectionEntry = Type.Object(
  {
    name: Type.String({ pattern: PACKAGE_NAME_PATTERN }),
    version: Type.String(),
    package_type: PackageType,
    /** True when the entry is there only because another entry depends on it. */
    is_dependency: Type.Boolean(),
  },
  strict,
);
export type CollectionEntry = Static<typeof CollectionEntry>;

export const CollectionAuthor = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    email: Type.Optional(Type.String()),
    url: Type.Optional(Type.String()),
  },
  strict,
);
export type CollectionAuthor = Static<typeof CollectionAuthor>;

/** COLLECTION.toml: a curated, installable set of packages holding all their transitive dependencies. */
export const CollectionManifest = Type.Object(
  {
    name: Type.String({ pattern: PACKAGE_NAME_PATTERN }),
    display_name: Type.String({ minLength: 1 }),
    description: Type.String({ minLength: 1 }),
    version: Type.String(),
    license: Type.String({ minLength: 1 }),
    min_platform_version: Type.Optional(Type.String()),
    featured: Type.Boolean(),
    tags: Strings(),
    icon: Type.Optional(Type.String()),
    author: Type.Optional(CollectionAuthor),
    metadata: Type.Object({ categories: Strings(), regions: Strings() }, strict),
    packages: Type.Array(CollectionEntry, { minItems: 1 }),
  },
  strict,
);
export type CollectionManifest = Static<typeof CollectionManifest>;
