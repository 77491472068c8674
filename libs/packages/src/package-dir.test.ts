import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AdapterPayload,
  AgentTemplatePayload,
  CompetencyPayload,
  ContractPayload,
  McpPayload,
  PackageManifest,
  SkillPayload,
  WorkflowTemplatePayload,
} from '@agent-platform/contracts';
import type { TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPackage, validatePackage } from './package-dir.ts';
import { PackageError } from './package-error.ts';
import { insertAfter, setBody, setKey, writeMutated } from './testing/mutate.ts';
import { FIXTURES, type FixtureName } from './testing/package-fixtures.ts';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ap-package-dir-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const SCHEMAS: Record<string, TSchema> = {
  'AGENT.md': AgentTemplatePayload,
  'COMPETENCY.md': CompetencyPayload,
  'SKILL.md': SkillPayload,
  'workflow.json': WorkflowTemplatePayload,
  'mcp.json': McpPayload,
  'adapter.json': AdapterPayload,
  'CONTRACT.json': ContractPayload,
};

describe('valid packages', () => {
  it.each(Object.keys(FIXTURES) as FixtureName[])(
    'the %s example passes, and its normalized form matches the contracts',
    async (name) => {
      const dir = await writeMutated(root, name);
      const report = await validatePackage(dir, { platformVersion: '0.1.0' });
      expect(report.problems).toEqual([]);
      expect(report.warnings).toEqual([]);
      expect(report.ok).toBe(true);
      expect(Value.Check(PackageManifest, report.manifest)).toBe(true);
      const payload = report.payload!;
      expect(payload.file).toBe(FIXTURES[name].payloadFile);
      expect(Value.Errors(SCHEMAS[payload.file]!, payload.data)).toEqual([]);
    },
  );

  it('loads a package with the sha256 of its payload bytes', async () => {
    const dir = await writeMutated(root, 'agent');
    const loaded = await loadPackage(dir, { platformVersion: '0.1.0' });
    const bytes = await readFile(join(dir, 'payload/AGENT.md'));
    expect(loaded.content_hash).toBe(`sha256:${createHash('sha256').update(bytes).digest('hex')}`);
    expect(loaded.manifest.package.name).toBe('claims-intake');
    expect(loaded.payload).toMatchObject({
      file: 'AGENT.md',
      data: {
        competencies: ['claims-triage'],
        system_prompt: 'You are a claims intake assistant. Ask for the policy number first.',
      },
    });
  });

  it('accepts a matching content_hash', async () => {
    const hash = `sha256:${createHash('sha256').update(FIXTURES.agent.payload).digest('hex')}`;
    const dir = await writeMutated(root, 'agent', {
      manifest: (t) => `${t}\n[signing]\ncontent_hash = "${hash}"\n`,
    });
    const report = await validatePackage(dir, { platformVersion: '0.1.0' });
    expect(report.problems).toEqual([]);
    expect(report.manifest?.signing).toEqual({ content_hash: hash });
  });

  it('ignores files outside package.toml, payload/ and README.md (dist/)', async () => {
    const dir = await writeMutated(root, 'agent', { extra: { 'README.md': '# x', 'dist/old.tar.gz': 'x' } });
    const report = await validatePackage(dir, { platformVersion: '0.1.0' });
    expect(report.ok).toBe(true);
    // The README is part of the package now: no warning about it.
    expect(report.warnings.filter((w) => w.file === 'README.md')).toEqual([]);
  });
});

describe('SKILL.md choices', () => {
  it('warns about an unknown field instead of refusing the skill', async () => {
    const dir = await writeMutated(root, 'skill', {
      payload: insertAfter('---', 'name: summarize\nmetadata: {author: me}'),
    });
    const report = await validatePackage(dir, { platformVersion: '0.1.0' });
    expect(report.ok).toBe(true);
    expect(report.warnings.map((w) => [w.file, w.field, w.rule])).toEqual([
      ['payload/SKILL.md', 'name', 'unknown-key'],
      ['payload/SKILL.md', 'metadata', 'unknown-key'],
    ]);
    expect(report.payload?.data).not.toHaveProperty('name');
  });

  it('matches runtime case-insensitively, defaults it to promptonly and needs no entry for builtin', async () => {
    const wasm = await writeMutated(root, 'skill', {
      payload: (t) => setKey('runtime', 'Wasm')(insertAfter('---', 'entry: skill.wasm')(t)),
    });
    expect((await validatePackage(wasm, { platformVersion: '0.1.0' })).payload?.data).toMatchObject({
      runtime: 'wasm',
      entry: 'skill.wasm',
    });
    const absent = await writeMutated(root, 'skill', { payload: setKey('runtime', undefined) });
    expect((await validatePackage(absent, { platformVersion: '0.1.0' })).payload?.data).toMatchObject({
      runtime: 'promptonly',
    });
    const builtin = await writeMutated(root, 'skill', {
      payload: (t) => setBody('')(setKey('runtime', 'builtin')(t)),
    });
    expect((await validatePackage(builtin, { platformVersion: '0.1.0' })).problems).toEqual([]);
  });

  it('warns when the SKILL.md version differs from the package version', async () => {
    const dir = await writeMutated(root, 'skill', { payload: setKey('version', '1.0.0') });
    const report = await validatePackage(dir, { platformVersion: '0.1.0' });
    expect(report.ok).toBe(true);
    expect(report.warnings).toEqual([
      expect.objectContaining({ field: 'version', rule: 'version-mismatch' }),
    ]);
  });
});

describe('workflow warnings', () => {
  it('warns about a {{variable}} nothing sets and an agent missing from agents_required', async () => {
    const dir = await writeMutated(root, 'workflow', {
      payload: (t) =>
        t
          .replace('{{intake}} {{input}}', '{{intake}} {{summary}}')
          .replace('"agents_required": [\n    "claims-intake"\n  ]', '"agents_required": []'),
    });
    const report = await validatePackage(dir, { platformVersion: '0.1.0' });
    expect(report.ok).toBe(true);
    const rules = report.warnings.map((w) => `${w.field} ${w.rule}`);
    expect(rules).toContain('steps[5].prompt_template undefined-variable');
    expect(rules).toContain('steps[0].agent agent-not-required');
  });
});

describe('package layout (D4)', () => {
  it('needs package.toml', async () => {
    const dir = await writeMutated(root, 'agent', { remove: ['package.toml'] });
    const report = await validatePackage(dir);
    expect(report.problems).toEqual([
      expect.objectContaining({ file: 'package.toml', field: '(file)', rule: 'manifest-missing' }),
    ]);
  });

  it('needs the payload file of the package type', async () => {
    const dir = await writeMutated(root, 'agent', { remove: ['payload/AGENT.md'] });
    const report = await validatePackage(dir);
    expect(report.problems).toEqual([
      expect.objectContaining({ file: 'payload/AGENT.md', field: '(file)', rule: 'payload-missing' }),
    ]);
  });

  it('needs a payload/ directory', async () => {
    const dir = await writeMutated(root, 'contract', { remove: ['payload'] });
    const report = await validatePackage(dir);
    expect(report.problems).toEqual([
      expect.objectContaining({ file: 'payload/CONTRACT.json', rule: 'payload-missing' }),
    ]);
  });

  it('refuses any other file in payload/', async () => {
    const dir = await writeMutated(root, 'agent', { extra: { 'payload/notes.txt': 'x' } });
    const report = await validatePackage(dir);
    expect(report.problems).toEqual([
      expect.objectContaining({ file: 'payload/notes.txt', field: '(file)', rule: 'payload-extra' }),
    ]);
  });

  it('refuses a sub-directory in payload/', async () => {
    const dir = await writeMutated(root, 'agent');
    await mkdir(join(dir, 'payload/assets'));
    const report = await validatePackage(dir);
    expect(report.problems).toEqual([
      expect.objectContaining({ file: 'payload/assets/', rule: 'payload-extra' }),
    ]);
  });

  it('refuses the payload file of another type, hinting at a wrong case', async () => {
    const dir = await writeMutated(root, 'agent', {
      remove: ['payload/AGENT.md'],
      extra: { 'payload/agent.md': FIXTURES.agent.payload },
    });
    const report = await validatePackage(dir);
    expect(report.problems.map((p) => [p.file, p.rule])).toEqual([
      ['payload/agent.md', 'payload-extra'],
      ['payload/AGENT.md', 'payload-missing'],
    ]);
    expect(report.problems[0]?.message).toContain('did you mean AGENT.md?');
  });

  it('refuses an integration holding both mcp.json and adapter.json', async () => {
    const dir = await writeMutated(root, 'mcp', {
      extra: { 'payload/adapter.json': FIXTURES.adapter.payload },
    });
    const report = await validatePackage(dir);
    expect(report.problems).toEqual([
      expect.objectContaining({ file: 'payload/mcp.json', rule: 'payload-extra' }),
    ]);
  });

  it('still checks the payload when package.toml has faults, so every problem shows at once', async () => {
    const dir = await writeMutated(root, 'agent', {
      manifest: setKey('title', '""'),
      payload: insertAfter('---', 'model: x'),
    });
    const report = await validatePackage(dir);
    expect(report.problems.map((p) => `${p.file} ${p.rule}`)).toEqual([
      'package.toml non-blank',
      'payload/AGENT.md forbidden-key',
    ]);
  });

  it('reports a missing directory and a file given as a directory', async () => {
    const missing = join(root, 'no-such-package');
    expect((await validatePackage(missing)).problems).toEqual([
      { file: missing, field: '(file)', rule: 'package-dir', message: 'no such directory' },
    ]);
    const file = join(root, 'a-file');
    await writeFile(file, 'x');
    expect((await validatePackage(file)).problems).toEqual([
      expect.objectContaining({ file, rule: 'package-dir' }),
    ]);
  });

  it('throws a PackageError listing every problem from loadPackage', async () => {
    const dir = await writeMutated(root, 'agent', { manifest: setKey('name', '"Bad"') });
    const error = await loadPackage(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PackageError);
    expect((error as PackageError).category).toBe('ValidationError');
    expect((error as PackageError).problems).toEqual([
      expect.objectContaining({ field: 'package.name', rule: 'name-pattern' }),
    ]);
    expect((error as PackageError).message).toContain('package.toml: package.name: must be lower-case');
  });
});
