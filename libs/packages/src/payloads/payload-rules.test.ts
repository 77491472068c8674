import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validatePackage } from '../package-dir.ts';
import { insertAfter, setBody, setJson, setKey, writeMutated, type Mutation } from '../testing/mutate.ts';
import { FIXTURES, type FixtureName } from '../testing/package-fixtures.ts';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ap-payload-rules-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

type Case = [name: string, mutation: Mutation, field: string, rule: string];

const yaml = (key: string, value: string | undefined): Mutation => ({ payload: setKey(key, value) });
const front = (lines: string): Mutation => ({ payload: insertAfter('---', lines) });
const json = (path: string, value: unknown): Mutation => ({ payload: setJson(path, value) });
const text = (payload: string): Mutation => ({ payload: () => payload });

const AGENT: Case[] = [
  ['no frontmatter', text('You are an agent.'), '(file)', 'frontmatter'],
  ['frontmatter not closed', text('---\ndescription: x\nYou are an agent.'), '(file)', 'frontmatter'],
  ['frontmatter not YAML', front('competencies: [unclosed'), '(file)', 'yaml-syntax'],
  ['frontmatter duplicate key', front('description: again'), '(file)', 'yaml-syntax'],
  ['frontmatter a list', text('---\n- a\n---\nbody'), '(file)', 'frontmatter'],
  ['unknown field', front('temperature: 0.2'), 'temperature', 'unknown-key'],
  ['model field', front('model: gpt-4o'), 'model', 'forbidden-key'],
  ['triggers field', front('triggers: [cron]'), 'triggers', 'forbidden-key'],
  ['description missing', yaml('description', undefined), 'description', 'required'],
  ['description blank', yaml('description', '""'), 'description', 'non-blank'],
  ['description not a string', yaml('description', '[a]'), 'description', 'type'],
  ['competencies not an array', yaml('competencies', 'claims-triage'), 'competencies', 'type'],
  [
    'competency not a package name',
    yaml('competencies', '[Claims_Triage]'),
    'competencies[0]',
    'package-name',
  ],
  ['allow_skill_tools item not a string', yaml('allow_skill_tools', '[1]'), 'allow_skill_tools[0]', 'type'],
  [
    'allow_integration_tools not an array',
    yaml('allow_integration_tools', '{a: 1}'),
    'allow_integration_tools',
    'type',
  ],
  ['empty body', { payload: setBody('  \n\n') }, '(body)', 'body-required'],
];

const COMPETENCY: Case[] = [
  ['id field', front('id: triage'), 'id', 'forbidden-key'],
  ['name field', front('name: Triage'), 'name', 'forbidden-key'],
  ['category field', front('category: claims'), 'category', 'forbidden-key'],
  ['unknown field', front('permissions: []'), 'permissions', 'unknown-key'],
  ['description missing', yaml('description', undefined), 'description', 'required'],
  ['skills missing', yaml('skills', undefined), 'skills', 'required'],
  ['skills empty', yaml('skills', '[]'), 'skills', 'min-items'],
  ['skill not a package name', yaml('skills', '[Summarize!]'), 'skills[0]', 'package-name'],
  ['tools not an array', yaml('tools', 'lookup_policy'), 'tools', 'type'],
  ['contract not a package name', yaml('contracts', '[x]'), 'contracts[0]', 'package-name'],
  ['integrations not an array', yaml('integrations', '1'), 'integrations', 'type'],
  [
    'settings not an array',
    { payload: (t) => t.replace(/settings:\n( {2}.*\n)+/, 'settings: 1\n') },
    'settings',
    'type',
  ],
  [
    'setting type unknown',
    { payload: (t) => t.replace('type: Select', 'type: Slider') },
    'settings[0].type',
    'setting-type',
  ],
  [
    'setting type lower case',
    { payload: (t) => t.replace('type: Toggle', 'type: toggle') },
    'settings[1].type',
    'setting-type',
  ],
  [
    'Select without values',
    { payload: (t) => t.replace('    values: [low, medium, high]\n', '') },
    'settings[0].values',
    'select-values',
  ],
  [
    'Select with empty values',
    { payload: (t) => t.replace('    values: [low, medium, high]\n', '    values: []\n') },
    'settings[0].values',
    'select-values',
  ],
  [
    'setting key missing',
    { payload: (t) => t.replace('  - key: notify\n    label', '  - label') },
    'settings[1].key',
    'required',
  ],
  [
    'setting label missing',
    { payload: (t) => t.replace('    label: Notify the adjuster\n', '') },
    'settings[1].label',
    'required',
  ],
  [
    'setting type missing',
    { payload: (t) => t.replace('    type: Number\n', '') },
    'settings[2].type',
    'required',
  ],
  [
    'setting key twice',
    { payload: (t) => t.replace('key: notify', 'key: severity_threshold') },
    'settings[1].key',
    'duplicate-key',
  ],
  [
    'setting unknown key',
    { payload: (t) => t.replace('    type: Number\n', '    type: Number\n    min: 0\n') },
    'settings[2].min',
    'unknown-key',
  ],
  [
    'Toggle default not boolean',
    { payload: (t) => t.replace('default: true', 'default: "yes"') },
    'settings[1].default',
    'setting-default',
  ],
  [
    'Number default not number',
    { payload: (t) => t.replace('default: 5000', 'default: lots') },
    'settings[2].default',
    'setting-default',
  ],
  [
    'Select default not a value',
    { payload: (t) => t.replace('default: high', 'default: extreme') },
    'settings[0].default',
    'setting-default',
  ],
  [
    'input name missing',
    { payload: (t) => t.replace('  - name: claim_text\n    type', '  - type') },
    'inputs[0].name',
    'required',
  ],
  [
    'input type missing',
    { payload: (t) => t.replace('    type: string\n', '') },
    'inputs[0].type',
    'required',
  ],
  [
    'input required not boolean',
    { payload: (t) => t.replace('required: true', 'required: "yes"') },
    'inputs[0].required',
    'type',
  ],
  [
    'input unknown key',
    { payload: (t) => t.replace('    required: true\n', '    required: true\n    default: x\n') },
    'inputs[0].default',
    'unknown-key',
  ],
  [
    'output values not strings',
    {
      payload: (t) =>
        t.replace('values: [low, medium, high]\n  - name: score', 'values: [1, 2]\n  - name: score'),
    },
    'outputs[0].values[0]',
    'type',
  ],
  [
    'output range min over max',
    { payload: (t) => t.replace('{min: 0, max: 100}', '{min: 100, max: 0}') },
    'outputs[1].range',
    'range',
  ],
  [
    'output range bad shape',
    { payload: (t) => t.replace('{min: 0, max: 100}', '"0-100"') },
    'outputs[1].range',
    'range',
  ],
  [
    'output name twice',
    { payload: (t) => t.replace('name: score', 'name: severity') },
    'outputs[1].name',
    'duplicate-name',
  ],
  [
    'outputs item not a table',
    { payload: (t) => t.replace(/outputs:\n( {2}.*\n)+/, 'outputs: [severity]\n') },
    'outputs[0]',
    'type',
  ],
  ['schedule not cron', yaml('schedule', 'every day'), 'schedule', 'cron'],
  ['schedule with 7 fields', yaml('schedule', '"0 0 9 * * 1 2026"'), 'schedule', 'cron'],
  ['schedule with bad field', yaml('schedule', '"0 25 * * *"'), 'schedule', 'cron'],
  ['schedule without action', yaml('schedule_action', undefined), 'schedule_action', 'schedule-needs-action'],
  ['action without schedule', yaml('schedule', undefined), 'schedule_action', 'action-needs-schedule'],
  ['empty body', { payload: setBody('') }, '(body)', 'body-required'],
];

const SKILL: Case[] = [
  ['description missing', yaml('description', undefined), 'description', 'required'],
  ['version not semver', yaml('version', 'one'), 'version', 'semver'],
  ['version a YAML number', yaml('version', '1.2'), 'version', 'type'],
  ['license blank', yaml('license', '" "'), 'license', 'non-empty'],
  ['license with newline', yaml('license', '"MIT\\nBSD"'), 'license', 'single-line'],
  ['runtime unknown', yaml('runtime', 'java'), 'runtime', 'skill-runtime'],
  ['runtime without entry', yaml('runtime', 'python'), 'entry', 'entry-required'],
  ['entry blank', front('entry: ""'), 'entry', 'non-blank'],
  ['promptonly with empty body', { payload: setBody('') }, '(body)', 'body-required'],
  [
    'default runtime with empty body',
    { payload: (t) => setBody('')(setKey('runtime', undefined)(t)) },
    '(body)',
    'body-required',
  ],
  [
    'tools not an array',
    { payload: (t) => t.replace(/tools:\n( {2}.*\n)+/, 'tools: summarize\n') },
    'tools',
    'type',
  ],
  [
    'tool twice',
    { payload: (t) => t.replace('  - name: outline', '  - name: summarize') },
    'tools[1]',
    'duplicate-tool',
  ],
  ['tool a number', { payload: (t) => t.replace('  - summarize', '  - 5') }, 'tools[0]', 'type'],
  [
    'tool without name',
    { payload: (t) => t.replace('  - name: outline\n    description', '  - description') },
    'tools[1].name',
    'required',
  ],
  [
    'tool unknown key',
    { payload: (t) => t.replace('    input_schema', '    timeout: 3\n    input_schema') },
    'tools[1].timeout',
    'unknown-key',
  ],
  [
    'tool input_schema not an object',
    { payload: (t) => t.replace('input_schema: {type: object}', 'input_schema: object') },
    'tools[1].input_schema',
    'type',
  ],
  [
    'config not a table',
    { payload: (t) => t.replace('config:\n  max_words: 200', 'config: 200') },
    'config',
    'type',
  ],
];

const WORKFLOW: Case[] = [
  ['not JSON', text('{ "description": '), '(file)', 'json-syntax'],
  ['top level an array', json('', []), '(file)', 'type'],
  ['name field', json('name', 'pipeline'), 'name', 'forbidden-key'],
  ['unknown field', json('triggers', []), 'triggers', 'unknown-key'],
  ['description missing', json('description', undefined), 'description', 'required'],
  [
    'agents_required item not a package name',
    json('agents_required', ['Claims Intake']),
    'agents_required[0]',
    'package-name',
  ],
  ['steps missing', json('steps', undefined), 'steps', 'required'],
  ['steps empty', json('steps', []), 'steps', 'min-items'],
  ['steps not an array', json('steps', {}), 'steps', 'type'],
  ['step not an object', json('steps.0', 'intake'), 'steps[0]', 'type'],
  ['step unknown key', json('steps.0.retries', 2), 'steps[0].retries', 'unknown-key'],
  ['step name missing', json('steps.0.name', undefined), 'steps[0].name', 'required'],
  ['step names repeat', json('steps.1.name', 'intake'), 'steps[1].name', 'duplicate-step-name'],
  ['agent missing', json('steps.0.agent', undefined), 'steps[0].agent', 'required'],
  ['agent ById not a UUID', json('steps.0.agent', { ById: 'agent-1' }), 'steps[0].agent', 'step-agent'],
  [
    'agent with two tags',
    json('steps.0.agent', { ByName: 'a', ById: '7d9f1c1e-3b1a-4c55-9a55-0b8f0b1c2d3e' }),
    'steps[0].agent',
    'step-agent',
  ],
  ['agent unknown tag', json('steps.0.agent', { name: 'claims-intake' }), 'steps[0].agent', 'step-agent'],
  ['agent blank string', json('steps.0.agent', ' '), 'steps[0].agent', 'step-agent'],
  ['prompt_template not a string', json('steps.0.prompt_template', 5), 'steps[0].prompt_template', 'type'],
  ['prompt alias not a string', json('steps.1.prompt', ['x']), 'steps[1].prompt', 'type'],
  ['bare Conditional', json('steps.4.mode', 'Conditional'), 'steps[4].mode', 'mode-needs-parameters'],
  ['bare loop', json('steps.5.mode', 'loop'), 'steps[5].mode', 'mode-needs-parameters'],
  ['mode unknown', json('steps.0.mode', 'Parallel'), 'steps[0].mode', 'step-mode'],
  ['mode a number', json('steps.0.mode', 1), 'steps[0].mode', 'step-mode'],
  ['mode object with unknown tag', json('steps.0.mode', { Sequential: {} }), 'steps[0].mode', 'step-mode'],
  [
    'mode object with two tags',
    json('steps.4.mode', { Conditional: { condition: 'A' }, Loop: { until: 'B', max_iterations: 1 } }),
    'steps[4].mode',
    'step-mode',
  ],
  [
    'Conditional without condition',
    json('steps.4.mode', { Conditional: {} }),
    'steps[4].mode.Conditional.condition',
    'required',
  ],
  [
    'Conditional blank condition',
    json('steps.4.mode', { Conditional: { condition: '' } }),
    'steps[4].mode.Conditional.condition',
    'non-blank',
  ],
  [
    'Conditional unknown key',
    json('steps.4.mode', { Conditional: { condition: 'A', negate: true } }),
    'steps[4].mode.Conditional.negate',
    'unknown-key',
  ],
  [
    'Loop without until',
    json('steps.5.mode', { Loop: { max_iterations: 2 } }),
    'steps[5].mode.Loop.until',
    'required',
  ],
  [
    'Loop without max_iterations',
    json('steps.5.mode', { Loop: { until: 'DONE' } }),
    'steps[5].mode.Loop.max_iterations',
    'required',
  ],
  [
    'Loop max_iterations zero',
    json('steps.5.mode', { Loop: { until: 'DONE', max_iterations: 0 } }),
    'steps[5].mode.Loop.max_iterations',
    'positive-integer',
  ],
  ['timeout_secs zero', json('steps.0.timeout_secs', 0), 'steps[0].timeout_secs', 'positive-integer'],
  ['timeout_secs fractional', json('steps.0.timeout_secs', 1.5), 'steps[0].timeout_secs', 'positive-integer'],
  [
    'timeout_seconds a string',
    json('steps.0.timeout_seconds', '30'),
    'steps[0].timeout_seconds',
    'positive-integer',
  ],
  ['error_mode unknown', json('steps.0.error_mode', 'Abort'), 'steps[0].error_mode', 'step-error-mode'],
  ['error_mode bare retry', json('steps.0.error_mode', 'retry'), 'steps[0].error_mode', 'step-error-mode'],
  [
    'Retry without max_retries',
    json('steps.0.error_mode', { Retry: {} }),
    'steps[0].error_mode.Retry.max_retries',
    'required',
  ],
  [
    'Retry max_retries zero',
    json('steps.0.error_mode', { Retry: { max_retries: 0 } }),
    'steps[0].error_mode.Retry.max_retries',
    'positive-integer',
  ],
  [
    'Retry unknown key',
    json('steps.0.error_mode', { Retry: { max_retries: 1, backoff: 2 } }),
    'steps[0].error_mode.Retry.backoff',
    'unknown-key',
  ],
  [
    'error_mode object unknown tag',
    json('steps.0.error_mode', { Skip: {} }),
    'steps[0].error_mode',
    'step-error-mode',
  ],
  [
    'output_var not an identifier',
    json('steps.0.output_var', 'intake-result'),
    'steps[0].output_var',
    'identifier',
  ],
  ['output_var input', json('steps.0.output_var', 'input'), 'steps[0].output_var', 'reserved-variable'],
  ['first step Collect', json('steps.0.mode', 'Collect'), 'steps[0].mode', 'collect-without-fanout'],
  ['Collect after Sequential', json('steps.2.mode', 'Sequential'), 'steps[3].mode', 'collect-without-fanout'],
  ['variables not a table', json('variables', ['carrier']), 'variables', 'type'],
  ['variable value not a string', json('variables.carrier', 1), 'variables.carrier', 'type'],
  [
    'variable name not an identifier',
    json('variables', { 'the carrier': 'Acme' }),
    'variables."the carrier"',
    'identifier',
  ],
];

const MCP: Case[] = [
  ['neither command nor url', json('command', undefined), '(file)', 'command-or-url'],
  ['command and url', json('url', 'https://mcp.example.com'), 'url', 'command-or-url'],
  ['url not http', text('{"url": "ws://mcp.example.com"}'), 'url', 'http-url'],
  ['args with a url', text('{"url": "https://mcp.example.com", "args": ["x"]}'), 'args', 'stdio-only'],
  ['command blank', json('command', ''), 'command', 'non-blank'],
  ['command not a string', json('command', ['node']), 'command', 'type'],
  ['args item not a string', json('args', ['a', 1]), 'args[1]', 'type'],
  ['env value not a string', json('env.ACME_URL', 5), 'env.ACME_URL', 'type'],
  ['env name invalid', json('env', { 'ACME-URL': 'x' }), 'env.ACME-URL', 'env-name'],
  ['unknown key', json('cwd', '/tmp'), 'cwd', 'unknown-key'],
];

const ADAPTER: Case[] = [
  ['kind unknown', json('kind', 'grpc'), 'kind', 'adapter-kind'],
  ['kind missing', json('kind', undefined), 'kind', 'required'],
  ['base_url missing', json('base_url', undefined), 'base_url', 'required'],
  ['base_url not http', json('base_url', 'claims.example.com'), 'base_url', 'http-url'],
  ['wsdl_url on rest', json('wsdl_url', 'https://x.example.com/wsdl'), 'wsdl_url', 'soap-only'],
  ['operations missing', json('operations', undefined), 'operations', 'required'],
  ['operations empty', json('operations', []), 'operations', 'min-items'],
  ['operation not an object', json('operations.0', 'create_claim'), 'operations[0]', 'type'],
  ['operation name invalid', json('operations.0.name', 'create claim'), 'operations[0].name', 'tool-name'],
  ['operation name twice', json('operations.1.name', 'create_claim'), 'operations[1].name', 'duplicate-tool'],
  ['operation unknown key', json('operations.0.headers', {}), 'operations[0].headers', 'unknown-key'],
  [
    'rest operation without method',
    json('operations.0.method', undefined),
    'operations[0].method',
    'required',
  ],
  ['rest method unknown', json('operations.0.method', 'FETCH'), 'operations[0].method', 'http-method'],
  ['rest path without slash', json('operations.0.path', 'claims'), 'operations[0].path', 'operation-path'],
  [
    'rest operation with soap_action',
    json('operations.0.soap_action', 'Create'),
    'operations[0].soap_action',
    'soap-only',
  ],
  ['soap operation without soap_action', json('kind', 'soap'), 'operations[0].soap_action', 'required'],
  [
    'soap operation with method',
    text(
      JSON.stringify({
        kind: 'soap',
        base_url: 'https://s.example.com',
        operations: [{ name: 'create_claim', soap_action: 'Create', method: 'POST' }],
      }),
    ),
    'operations[0].method',
    'rest-only',
  ],
  [
    'input_schema not an object',
    json('operations.0.input_schema', 'object'),
    'operations[0].input_schema',
    'type',
  ],
];

const CONTRACT: Case[] = [
  ['schema_version unsupported', json('schema_version', '2'), 'schema_version', 'schema-version'],
  ['schema_version a number', json('schema_version', 1), 'schema_version', 'type'],
  ['unknown key', json('name', 'claims'), 'name', 'unknown-key'],
  ['tools missing', json('tools', undefined), 'tools', 'required'],
  ['tools empty', json('tools', []), 'tools', 'min-items'],
  ['tool not an object', json('tools.0', 'create_claim'), 'tools[0]', 'type'],
  ['tool name missing', json('tools.0.name', undefined), 'tools[0].name', 'required'],
  ['tool name invalid', json('tools.0.name', 'create.claim'), 'tools[0].name', 'tool-name'],
  ['tool name twice', json('tools.1.name', 'create_claim'), 'tools[1].name', 'duplicate-tool'],
  ['tool unknown key', json('tools.0.examples', []), 'tools[0].examples', 'unknown-key'],
  ['input_schema missing', json('tools.0.input_schema', undefined), 'tools[0].input_schema', 'required'],
  ['input_schema an array', json('tools.0.input_schema', []), 'tools[0].input_schema', 'type'],
  ['output_schema a string', json('tools.1.output_schema', 'object'), 'tools[1].output_schema', 'type'],
];

const SUITES: [FixtureName, Case[]][] = [
  ['agent', AGENT],
  ['competency', COMPETENCY],
  ['skill', SKILL],
  ['workflow', WORKFLOW],
  ['mcp', MCP],
  ['adapter', ADAPTER],
  ['contract', CONTRACT],
];

describe.each(SUITES)('payload rules of the %s fixture', (fixture, cases) => {
  const file = `payload/${FIXTURES[fixture].payloadFile}`;
  const table = cases.map(([name, mutation, field, rule]) => ({ name, mutation, field, rule }));
  it.each(table)('$name -> $rule at $field', async ({ mutation, field, rule }) => {
    const dir = await writeMutated(root, fixture, mutation);
    const report = await validatePackage(dir, { platformVersion: '0.1.0' });
    expect(report.ok).toBe(false);
    expect(report.payload).toBeUndefined();
    expect(report.problems).toContainEqual(expect.objectContaining({ file, field, rule }));
  });
});

describe('payload encoding', () => {
  it('refuses a payload that is not UTF-8', async () => {
    const dir = await writeMutated(root, 'agent');
    await writeFile(join(dir, 'payload/AGENT.md'), Buffer.from([0x2d, 0x2d, 0x2d, 0x0a, 0xc3, 0x28]));
    const report = await validatePackage(dir);
    expect(report.problems).toContainEqual(
      expect.objectContaining({ file: 'payload/AGENT.md', rule: 'utf8' }),
    );
  });
});
