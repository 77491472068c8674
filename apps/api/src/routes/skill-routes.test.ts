import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writePackage, type PackageSpec } from '@agent-platform/domain/testing';
import { requireStarlarkRunner } from '@agent-platform/starlark/testing';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../testing/index.ts';

// Skills over HTTP (spec §Skills, docs/skills.md), on the api as composed for users: the
// catalog's install checks run on the interpreter npm install built.
const interpreter = requireStarlarkRunner('the starlark skill install tests');
afterAll(async () => interpreter?.close());

let api: TestApi;
let admin: string;
let root: string;

beforeEach(async () => {
  api = await startTestApi({ config: { auth: { mode: 'local' } } });
  admin = await api.issueKey('admin');
  root = await mkdtemp(join(tmpdir(), 'ap-skills-'));
});
afterEach(async () => {
  await api.close();
  await rm(root, { recursive: true, force: true });
});

const QUOTE = `description: Quotes a premium.
runtime: starlark
entry: quote.star
tools:
  - name: quote
    description: Premium for a sum insured.
    input_schema: {type: object, properties: {sum_insured: {type: number}}, required: [sum_insured]}
  - refund`;

const code = (source: string) => `Call quote for any premium.\n\n\`\`\`starlark\n${source}\`\`\`\n`;
const QUOTE_CODE = code('def quote(args):\n    return {"premium": args["sum_insured"] * 0.002}\n\ndef refund(args):\n    return 0\n');

const skill = (name: string, extra: Partial<PackageSpec> = {}) => writePackage(root, { type: 'skill', name, ...extra });
const install = (path: string, token = admin) => api.request('POST', '/skills/install', { token, body: { path } });

async function expectNothingInstalled(): Promise<void> {
  expect((await api.request('GET', '/catalog/installed', { token: admin })).body.packages).toEqual([]);
  expect((await api.request('GET', '/skills', { token: admin })).body.skills).toEqual([]);
}

describe('skill routes', () => {
  it('installs a promptonly skill through the catalog, lists it and shows it', async () => {
    const res = await install(await skill('claim-tone', { body: 'Write kindly.' }));
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: 'claim-tone' });

    const installed = await api.request('GET', '/catalog/installed', { token: admin });
    expect(installed.body.packages).toEqual([
      { name: 'claim-tone', type: 'skill', version: '1.0.0', title: 'Title of claim-tone', installed_at: expect.any(String), source: 'path', revoked: false, revocation: null },
    ]);
    const viewer = await api.issueKey('viewer');
    const list = await api.request('GET', '/skills', { token: viewer });
    expect(list.status).toBe(200);
    expect(list.body).toEqual({
      skills: [{ id: 'claim-tone', name: 'claim-tone', version: '1.0.0', tools: [], runtime: 'PromptOnly', bundled: false }],
    });
    const detail = await api.request('GET', '/skills/claim-tone', { token: viewer });
    expect(detail.status).toBe(200);
    expect(detail.body).toEqual({
      id: 'claim-tone',
      name: 'claim-tone',
      version: '1.0.0',
      description: 'A skill.',
      tools: [],
      runtime: 'PromptOnly',
      requirements: { interpreter: null, interpreter_available: true, entry: null },
      bundled: false,
    });
  });

  it.skipIf(interpreter === null)('installs a starlark skill after checking its code, and shows its tools with their schemas', async () => {
    const res = await install(await skill('quoting', { frontmatter: QUOTE, body: QUOTE_CODE }));
    expect(res.status).toBe(201);
    const list = await api.request('GET', '/skills', { token: admin });
    expect(list.body.skills).toEqual([
      { id: 'quoting', name: 'quoting', version: '1.0.0', tools: ['quote', 'refund'], runtime: 'Starlark', bundled: false },
    ]);
    const detail = await api.request('GET', '/skills/quoting', { token: admin });
    expect(detail.body).toMatchObject({
      runtime: 'Starlark',
      requirements: { interpreter: 'starlark', interpreter_available: true, entry: 'quote.star' },
      tools: [
        {
          name: 'quote',
          description: 'Premium for a sum insured.',
          input_schema: { type: 'object', properties: { sum_insured: { type: 'number' } }, required: ['sum_insured'] },
        },
        { name: 'refund', description: 'Quotes a premium.', input_schema: { type: 'object' } },
      ],
    });
  });

  it('never lists bundled skills, but shows each by id; an unknown id is 404', async () => {
    expect((await api.request('GET', '/skills', { token: admin })).body).toEqual({ skills: [] });
    const plain = await api.request('GET', '/skills/plain-language', { token: admin });
    expect(plain.status).toBe(200);
    expect(plain.body).toMatchObject({ id: 'plain-language', runtime: 'PromptOnly', bundled: true, tools: [] });
    const premium = await api.request('GET', '/skills/premium-calc', { token: admin });
    expect(premium.body).toMatchObject({ runtime: 'Starlark', bundled: true, requirements: { entry: 'premium.star' } });
    expect(premium.body.tools.map((t: { name: string }) => t.name)).toEqual(['prorate_premium', 'claim_payout']);
    const dates = await api.request('GET', '/skills/date-math', { token: admin });
    expect(dates.body.tools.map((t: { name: string }) => t.name)).toEqual(['days_between', 'add_days', 'day_of_week']);

    const missing = await api.request('GET', '/skills/no-such-skill', { token: admin });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({
      error: { category: 'NotFound', message: "skill 'no-such-skill' not found", details: { kind: 'skill', id: 'no-such-skill' } },
    });
  });

  it('refuses a package of another type with 400, installing nothing (not even its dependencies)', async () => {
    await skill('claim-tone');
    const competency = await writePackage(root, { type: 'competency', name: 'triage', skills: ['claim-tone'], dependencies: { 'claim-tone': '^1.0.0' } });
    const res = await install(competency);
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      category: 'ValidationError',
      message: `the package at ${competency} is a competency package (triage); this route installs skill packages only (POST /catalog/install takes any type)`,
      details: { path: competency, expected_type: 'skill', package_type: 'competency', name: 'triage' },
    });
    await expectNothingInstalled();
  });

  it('refuses a runtime other than promptonly and starlark, naming it, on /skills/install and /catalog/install alike', async () => {
    const dir = await skill('py-skill', { frontmatter: 'description: Python.\nruntime: python\nentry: main.py' });
    const message = 'skill py-skill: runtime python is not supported; only promptonly and starlark skills install';
    const viaSkills = await install(dir);
    expect(viaSkills.status).toBe(400);
    expect(viaSkills.body.error).toMatchObject({ category: 'ValidationError', message, details: { runtime: 'python' } });
    const viaCatalog = await api.request('POST', '/catalog/install', { token: admin, body: { path: dir } });
    expect(viaCatalog.status).toBe(400);
    expect(viaCatalog.body.error).toMatchObject({ category: 'ValidationError', message });
    await expectNothingInstalled();
  });

  it('refuses a skill that depends on a refused one, installing neither', async () => {
    await skill('wasm-skill', { frontmatter: 'description: Wasm.\nruntime: wasm\nentry: main.wasm' });
    const res = await install(await skill('wrapper', { dependencies: { 'wasm-skill': '^1.0.0' } }));
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('runtime wasm is not supported');
    await expectNothingInstalled();
  });

  describe.skipIf(interpreter === null)('starlark install checks', () => {
    it('refuses a syntax error at install, naming the entry file and the line', async () => {
      const res = await install(await skill('quoting', { frontmatter: QUOTE, body: code('def quote(args):\n    return 1\n\ndef refund(args)\n    return 0\n') }));
      expect(res.status).toBe(400);
      expect(res.body.error).toEqual({
        category: 'ValidationError',
        message: "skill quoting: quote.star:5: got newline, want ':'",
        details: { skill: 'quoting', file: 'quote.star', kind: 'syntax', line: 5, column: 1 },
      });
      await expectNothingInstalled();
    });

    it('refuses code that reaches for a file or the clock, or loads a module', async () => {
      const file = await install(await skill('reader', { frontmatter: QUOTE, body: code('def quote(args):\n    return open("/etc/passwd")\n\ndef refund(args):\n    return 0\n') }));
      expect(file.body.error.message).toBe('skill reader: quote.star:2: undefined: open');
      const clock = await install(await skill('clock', { frontmatter: QUOTE, body: code('def quote(args):\n    return time.now()\n\ndef refund(args):\n    return 0\n') }));
      expect(clock.body.error.message).toBe('skill clock: quote.star:2: undefined: time');
      const loader = await install(await skill('loader', { frontmatter: QUOTE, body: code('load("http.star", "get")\n') }));
      expect(loader.body.error.message).toBe('skill loader: quote.star:1: load not implemented by this application');
      await expectNothingInstalled();
    });

    it('refuses a tool without its function, or whose function does not take one argument, naming them', async () => {
      const missing = await install(await skill('quoting', { frontmatter: QUOTE, body: code('def quote(args):\n    return 1\n') }));
      expect(missing.status).toBe(400);
      expect(missing.body.error.message).toBe(
        'skill quoting: quote.star defines no top-level function for tool refund (each tool is `def <name>(args)`)',
      );
      const arity = await install(await skill('quoting2', { frontmatter: QUOTE, body: code('def quote(a, b):\n    return 1\n\ndef refund(args):\n    return 0\n') }));
      expect(arity.body.error.message).toBe(
        'skill quoting2: in quote.star, quote must take exactly one parameter, the arguments dict: `def quote(args)`',
      );
      const none = await install(await skill('quoting3', { frontmatter: QUOTE, body: 'No code here.' }));
      expect(none.body.error.message).toContain('one fenced ```starlark block of the SKILL.md body; there is none');
      await expectNothingInstalled();
    });
  });

  it("counts bundled skills as Installed in a competency's skill states", async () => {
    const dir = await writePackage(root, { type: 'competency', name: 'servicing', skills: ['plain-language', 'date-math', 'not-there'] });
    expect((await api.request('POST', '/catalog/install', { token: admin, body: { path: dir } })).status).toBe(201);
    const deps = await api.request('GET', '/competencies/servicing/deps', { token: admin });
    expect(deps.body).toEqual({
      competency_id: 'servicing',
      skills: [
        { skill_id: 'plain-language', state: 'Installed' },
        { skill_id: 'date-math', state: 'Installed' },
        { skill_id: 'not-there', state: 'Missing' },
      ],
      ready: false,
    });
  });

  it('refuses a skill named like a bundled one with 409', async () => {
    const res = await install(await skill('plain-language'));
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({
      category: 'Conflict',
      message: 'skill plain-language is a bundled skill of the platform; give the package another name',
    });
    await expectNothingInstalled();
  });

  it('lets developers install and viewers read, but not install (SkillInstall, AgentList)', async () => {
    const dir = await skill('claim-tone');
    const viewer = await api.issueKey('viewer');
    const refused = await install(dir, viewer);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('forbidden');
    expect((await install(dir, await api.issueKey('developer'))).status).toBe(201);
    expect((await api.request('GET', '/skills/claim-tone', { token: viewer })).status).toBe(200);
  });

  it('refuses a body without path, or a relative path, with 400', async () => {
    expect((await api.request('POST', '/skills/install', { token: admin, body: {} })).status).toBe(400);
    const relative = await install('skills/claim-tone');
    expect(relative.status).toBe(400);
    expect(relative.body.error.message).toContain('path must be absolute');
  });
});
