import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/**
 * One valid package per payload file, used by the tests of this library and of the CLI: each
 * test copies one into a temp dir and mutates it.
 */
export interface PackageFixture {
  manifest: string;
  /** Path under payload/. */
  payloadFile: string;
  payload: string;
}

const manifest = (type: string, name: string, extra = '') => `# A package for tests
[package]
type = "${type}"
name = "${name}"
title = "Claims ${name}"
version = "1.2.0"
description = "A ${type} used by the tests."
license = "Apache-2.0"
min_platform_version = "0.1.0"

[package.metadata]
repository = "https://example.com/${name}"
homepage = "http://example.com"
keywords = ["claims", "fnol"]
categories = ["insurance/claims"]
regions = ["us", "GB"]
${extra}`;

export const FIXTURES = {
  agent: {
    manifest: manifest('agent-template', 'claims-intake', '\n[dependencies]\nclaims-triage = "^1.0.0"\n'),
    payloadFile: 'AGENT.md',
    payload: `---
description: Takes the first notice of loss and opens a claim.
competencies: [claims-triage]
allow_skill_tools: [summarize]
allow_integration_tools: [create_claim]
---
You are a claims intake assistant. Ask for the policy number first.
`,
  },
  competency: {
    manifest: manifest('competency', 'claims-triage', '\n[dependencies]\nsummarize = ">=1.0.0, <2.0.0"\n'),
    payloadFile: 'COMPETENCY.md',
    payload: `---
description: Triage a new claim.
skills: [summarize]
tools: [lookup_policy]
contracts: [claims-system]
integrations: [acme-claims]
settings:
  - key: severity_threshold
    label: Severity threshold
    description: Claims above this go to a human.
    type: Select
    default: high
    values: [low, medium, high]
  - key: notify
    label: Notify the adjuster
    type: Toggle
    default: true
  - key: max_amount
    label: Maximum amount
    type: Number
    default: 5000
inputs:
  - name: claim_text
    type: string
    required: true
outputs:
  - name: severity
    type: enum
    values: [low, medium, high]
  - name: score
    type: number
    range: {min: 0, max: 100}
schedule: "0 9 * * 1-5"
schedule_action: Review yesterday's open claims.
---
Triage each claim by severity.
`,
  },
  skill: {
    manifest: manifest(
      'skill',
      'summarize',
      '\n[standards]\nmcp_compatible = true\nopenapi_spec = "openapi.yaml"\n',
    ),
    payloadFile: 'SKILL.md',
    payload: `---
description: Summarize a document.
version: 1.2.0
license: MIT
tools:
  - summarize
  - name: outline
    description: Outline a document.
    input_schema: {type: object}
runtime: promptonly
config:
  max_words: 200
---
Summarize the input in at most {{max_words}} words.
`,
  },
  workflow: {
    manifest: manifest(
      'workflow-template',
      'claims-pipeline',
      '\n[dependencies]\nclaims-intake = "~1.2.0"\n',
    ),
    payloadFile: 'workflow.json',
    payload: `${JSON.stringify(
      {
        description: 'Intake then triage.',
        agents_required: ['claims-intake'],
        variables: { carrier: 'Acme' },
        steps: [
          {
            name: 'intake',
            agent: { ByName: 'claims-intake' },
            prompt_template: 'New claim for {{carrier}}: {{input}}',
            output_var: 'intake',
          },
          { name: 'a', agent: { ByName: 'claims-intake' }, mode: 'FanOut' },
          { name: 'b', agent: { ByName: 'claims-intake' }, mode: 'FanOut', timeout_secs: 60 },
          { name: 'merge', agent: { ByName: 'claims-intake' }, mode: 'Collect' },
          {
            name: 'gate',
            agent: { ByName: 'claims-intake' },
            mode: { Conditional: { condition: 'APPROVED' } },
            error_mode: 'Skip',
          },
          {
            name: 'refine',
            agent: { ByName: 'claims-intake' },
            mode: { Loop: { until: 'DONE', max_iterations: 3 } },
            error_mode: { Retry: { max_retries: 2 } },
            prompt_template: '{{intake}} {{input}}',
          },
        ],
      },
      null,
      2,
    )}\n`,
  },
  mcp: {
    manifest: manifest(
      'integration',
      'acme-claims',
      '\n[standards]\nmcp_compatible = true\n\n[implements.claims-system]\nversion = "^1.0.0"\ntool_map = { create_claim = "acme_create" }\n\n[implements.claims-system.field_map.create_claim]\npolicy_number = "policyNo"\n',
    ),
    payloadFile: 'mcp.json',
    payload: `${JSON.stringify({ command: 'node', args: ['server.js'], env: { ACME_URL: 'https://acme.example' } }, null, 2)}\n`,
  },
  adapter: {
    manifest: manifest(
      'integration',
      'acme-rest',
      '\n[implements.claims-system]\nversion = "^1.0.0"\ntool_map = { create_claim = "create_claim" }\n',
    ),
    payloadFile: 'adapter.json',
    payload: `${JSON.stringify(
      {
        kind: 'rest',
        base_url: 'https://claims.example.com/api',
        operations: [
          {
            name: 'create_claim',
            description: 'Open a claim.',
            method: 'post',
            path: '/claims',
            input_schema: { type: 'object' },
          },
          { name: 'get_claim', method: 'GET', path: '/claims/{id}' },
        ],
      },
      null,
      2,
    )}\n`,
  },
  contract: {
    manifest: manifest('contract', 'claims-system'),
    payloadFile: 'CONTRACT.json',
    payload: `${JSON.stringify(
      {
        schema_version: '1',
        tools: [
          {
            name: 'create_claim',
            description: 'Open a claim.',
            input_schema: { type: 'object', properties: { policy_number: { type: 'string' } } },
          },
          { name: 'get_claim', input_schema: { type: 'object' }, output_schema: { type: 'object' } },
        ],
      },
      null,
      2,
    )}\n`,
  },
} satisfies Record<string, PackageFixture>;

export type FixtureName = keyof typeof FIXTURES;

/** Writes `fixture` as a package directory `<root>/<name>`; `extra` adds files (path -> text). */
export async function writeFixture(
  root: string,
  name: string,
  fixture: PackageFixture,
  extra: Record<string, string> = {},
): Promise<string> {
  const dir = join(root, name);
  const files = {
    'package.toml': fixture.manifest,
    [`payload/${fixture.payloadFile}`]: fixture.payload,
    ...extra,
  };
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return dir;
}
