import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAgentStore, type AgentStore } from '../agents/agent-store.ts';
import { createSessionStore } from '../agents/create-session-store.ts';
import { composeSystemPrompt, loadAgentCompetencies } from '../agents/system-prompt.ts';
import { catalogCollections, type SkillRecord } from '../catalog/catalog-records.ts';
import { createCatalogService, type CatalogService } from '../catalog/catalog-service.ts';
import { directoryPackageSource } from '../catalog/package-source.ts';
import { writePackage, type PackageSpec } from '../catalog/package-writer.fixture.ts';
import { PlatformError } from '../errors/platform-error.ts';
import { createMemoryStore } from '../memory/memory-store.ts';
import { fixedClock } from '../time/clock.ts';
import { bundledSkills } from './bundled-skills.ts';
import { findSkill } from './find-skill.ts';
import { starlarkCode } from './starlark-code.ts';
import { starlarkToolBindings } from './starlark-tools.ts';

let dir: string;
let store: Store;
let agents: AgentStore;
let catalog: CatalogService;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-skills-'));
  const clock = fixedClock('2030-01-01T00:00:00.000Z');
  store = await openEmbeddedStore({ path: join(dir, 'platform.db') });
  agents = createAgentStore(store);
  const sessions = createSessionStore(store, clock);
  const memory = createMemoryStore(store, agents, clock);
  // No `skills` deps: this catalog has no Starlark interpreter, like a machine without Go.
  catalog = createCatalogService({ store, agents, sessions, memory, clock, source: directoryPackageSource('0.1.0') });
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const write = (spec: PackageSpec) => writePackage(join(dir, 'packages'), spec);
const STARLARK = 'description: Quotes.\nruntime: starlark\nentry: quote.star\ntools: [quote]';
const QUOTE_BODY = 'Quote premiums.\n\n```starlark\ndef quote(args):\n    return 1\n```\n';

describe('promptonly skills in the system prompt', () => {
  it("follow their competency's body, in COMPETENCY.md order, bundled ones too, each once; starlark skills add no text", async () => {
    await write({ type: 'skill', name: 'tone', body: 'Tone skill.' });
    await write({ type: 'skill', name: 'quoting', frontmatter: STARLARK, body: QUOTE_BODY });
    await write({ type: 'competency', name: 'intake', skills: ['tone', 'plain-language', 'gone'], dependencies: { tone: '*' }, body: 'Intake.' });
    await write({ type: 'competency', name: 'servicing', skills: ['tone', 'quoting'], dependencies: { tone: '*' }, body: 'Servicing.' });
    const root = await write({
      type: 'agent-template',
      name: 'helper',
      competencies: ['intake', 'servicing'],
      dependencies: { intake: '*', servicing: '*' },
      body: 'Agent.',
    });
    await catalog.install({ path: root });
    // The starlark skill is installed directly: this catalog has no interpreter to check it.
    const quoting = { ...(await bundledSkills()).get('premium-calc')!, id: 'quoting', name: 'quoting' };
    await catalogCollections(store).skills.upsert(quoting);

    const agent = (await agents.getByName('helper'))!;
    const plain = (await bundledSkills()).get('plain-language')!.body.trim();
    expect(composeSystemPrompt(agent, await loadAgentCompetencies(store, agent))).toBe(
      ['Agent.', 'Intake.', 'Tone skill.', plain, 'Servicing.'].join('\n\n'),
    );
  });
});

describe('install checks without a Starlark interpreter', () => {
  it('refuses a starlark skill saying how to enable starlark, and installs nothing', async () => {
    const root = await write({ type: 'skill', name: 'quoting', frontmatter: STARLARK, body: QUOTE_BODY });
    const error = await catalog.install({ path: root }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlatformError);
    expect(error).toMatchObject({
      category: 'CatalogError',
      message:
        'skill quoting is a starlark skill, and this installation has no Starlark interpreter; to enable starlark skills run: apt-get install golang-go golang-starlark-dev && npm install',
    });
    expect(await catalog.installed()).toEqual([]);
  });

  it('still installs promptonly skills', async () => {
    const root = await write({ type: 'skill', name: 'tone' });
    expect(await catalog.install({ path: root })).toMatchObject([{ name: 'tone', id: 'tone', status: 'installed' }]);
    expect(await findSkill(store, 'tone')).toMatchObject({ bundled: false, skill: { runtime: 'promptonly' } });
  });
});

describe('starlark tool bindings', () => {
  const skill = async (): Promise<SkillRecord> => (await bundledSkills()).get('premium-calc')!;

  it('give one tool per SKILL.md tool, named and described as GET /skills/{id} shows them', async () => {
    const bindings = starlarkToolBindings(await skill(), null);
    expect(bindings.map((b) => [b.skill_id, b.spec.name])).toEqual([
      ['premium-calc', 'prorate_premium'],
      ['premium-calc', 'claim_payout'],
    ]);
    expect(bindings[1]!.spec.input_schema).toMatchObject({ type: 'object', required: ['loss', 'limit'] });
  });

  it('fail each call saying how to enable starlark when this process has no interpreter', async () => {
    const [binding] = starlarkToolBindings(await skill(), null);
    await expect(binding!.execute({ annual_premium: 1 }, {})).rejects.toThrow(
      'this process has no Starlark interpreter; to enable starlark skills run: apt-get install golang-go golang-starlark-dev && npm install',
    );
  });

  it('are none for a promptonly skill', async () => {
    expect(starlarkToolBindings((await bundledSkills()).get('plain-language')!, null)).toEqual([]);
  });
});

describe('the code block of a starlark skill', () => {
  it('is the one fenced starlark block, backticks or tildes', () => {
    expect(starlarkCode('Prose.\n\n```starlark\ndef f(args):\n    return 1\n```\nMore prose.')).toEqual({
      ok: true,
      source: 'def f(args):\n    return 1\n',
    });
    expect(starlarkCode('~~~~ Starlark\nx = 1\n~~~~\n')).toEqual({ ok: true, source: 'x = 1\n' });
    expect(starlarkCode('```python\nx = 1\n```\n```starlark\ny = 2\n```')).toEqual({ ok: true, source: 'y = 2\n' });
  });

  it('is refused when missing, doubled or never closed', () => {
    expect(starlarkCode('No code.')).toMatchObject({ ok: false, message: expect.stringContaining('there is none') });
    expect(starlarkCode('```starlark\na = 1\n```\n```starlark\nb = 2\n```')).toMatchObject({
      ok: false,
      message: expect.stringContaining('the body has 2'),
    });
    expect(starlarkCode('Intro.\n```starlark\na = 1\n')).toMatchObject({
      ok: false,
      message: 'the ```starlark block opened on body line 2 is never closed',
    });
  });
});
