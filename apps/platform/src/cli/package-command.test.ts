import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readArchive, validateArchive } from '@agent-platform/packages';
import { FIXTURES, setKey, writeMutated } from '@agent-platform/packages/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCliHere, runCliProcess } from './testing/cli-runs.ts';

const ROOT = REPO_ROOT;
/** `agent-platform package <args>` as its own process, and in this process. */
const cli = (cwd: string, ...args: string[]) => runCliProcess(['package', ...args], { cwd });
const inProcess = (cwd: string, ...args: string[]) => runCliHere(['package', ...args], { cwd });

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-package-cli-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('agent-platform package validate', () => {
  it('prints a one-line OK summary and exits 0 for a valid package', async () => {
    const pkg = await writeMutated(dir, 'agent');
    const result = await cli(dir, 'validate', pkg.slice(dir.length + 1));
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^OK agent-template claims-intake 1\.2\.0 \(payload\/AGENT\.md, sha256:[0-9a-f]{64}\)\n$/,
    );
  });

  it('prints each problem as "file: field: message [rule]" and exits 1', async () => {
    const pkg = await writeMutated(dir, 'workflow', {
      manifest: setKey('name', '"claims--pipeline"'),
      payload: (t) => t.replace('"mode": "Collect"', '"mode": "Loop"'),
    });
    const result = await cli(dir, 'validate', pkg);
    expect(result.code).toBe(1);
    expect(result.stdout.trim().split('\n')).toEqual([
      'package.toml: package.name: must not contain consecutive hyphens (--) [no-consecutive-hyphens]',
      'payload/workflow.json: steps[3].mode: Loop carries parameters, so it is an object: {"Loop": {"until": "DONE", "max_iterations": 3}} [mode-needs-parameters]',
      `${pkg}: 2 problems`,
    ]);
  });

  it('prints warnings but still passes', async () => {
    const pkg = await writeMutated(dir, 'skill', { payload: (t) => t.replace('---\n', '---\nauthor: me\n') });
    const result = await inProcess(dir, 'validate', pkg);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      'warning: payload/SKILL.md: author: unknown SKILL.md field; ignored [unknown-key]\n',
    );
    expect(result.stdout).toMatch(
      /OK skill summarize 1\.2\.0 \(payload\/SKILL\.md, sha256:[0-9a-f]{64}, 1 warning\)/,
    );
  });

  it('passes every example package of the repository', async () => {
    const examples = join(ROOT, 'examples');
    // Every directory holding a package.toml (examples/claims-model is a model stand-in, not a package).
    const dirs = (await readdir(examples, { withFileTypes: true }))
      .filter((e) => e.isDirectory() && existsSync(join(examples, e.name, 'package.toml')))
      .map((e) => join(examples, e.name));
    expect(dirs.length).toBeGreaterThan(0);
    for (const example of dirs) {
      const result = await inProcess(ROOT, 'validate', example);
      expect(result.stdout, example).toMatch(/^OK /);
    }
  });

  it('reports a directory that does not exist', async () => {
    const result = await inProcess(dir, 'validate', 'missing');
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`${join(dir, 'missing')}: (file): no such directory [package-dir]`);
  });
});

describe('agent-platform package build', () => {
  it('sets the content hash, writes the archive to --out and prints its sha256', async () => {
    const pkg = await writeMutated(dir, 'contract');
    const result = await cli(dir, 'build', pkg, '--out', 'out');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const [hashLine, builtLine] = result.stdout.trim().split('\n');
    expect(hashLine).toMatch(/^package\.toml: \[signing\] content_hash = "sha256:[0-9a-f]{64}"$/);
    expect(builtLine).toMatch(/^Built out\/claims-system-1\.2\.0\.tar\.gz \(sha256 [0-9a-f]{64}\)$/);
    const archive = await readFile(join(dir, 'out/claims-system-1.2.0.tar.gz'));
    expect(validateArchive(archive, { platformVersion: '0.1.0' }).ok).toBe(true);
    expect(new TextDecoder().decode(readArchive(archive).get('payload/CONTRACT.json'))).toBe(
      FIXTURES.contract.payload,
    );
    expect(await readFile(join(pkg, 'package.toml'), 'utf8')).toContain('[signing]\ncontent_hash = "sha256:');
  });

  it('refuses an invalid package with its problems, exit 1 and no archive', async () => {
    const pkg = await writeMutated(dir, 'agent', {
      payload: (t) => t.replace('---\n', '---\nmodel: gpt-4o\n'),
    });
    const result = await inProcess(dir, 'build', pkg);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('payload/AGENT.md: model: agents carry no model');
    expect(result.stdout).toContain('1 problem; nothing was built');
    await expect(readFile(join(pkg, 'dist/claims-intake-1.2.0.tar.gz'))).rejects.toThrow();
  });
});

describe('agent-platform package command line', () => {
  it.each([
    [[], 'missing action'],
    [['frobnicate', 'x'], "unknown action 'frobnicate'"],
    [['validate'], 'package validate needs a package directory'],
    [['validate', 'a', 'b'], "unexpected argument 'b'"],
    [['validate', 'a', '--out', 'x'], '--out applies to package build only'],
    [['build', 'a', '--force'], "Unknown option '--force'"],
  ])('exits 2 with the usage for %j', async (args, message) => {
    const result = await inProcess(dir, ...args);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr).toContain('Usage:');
  });

  it('prints the usage for --help and exits 0', async () => {
    const result = await inProcess(dir, '--help');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('agent-platform package validate <dir>');
  });

  it('names an unknown command group and lists the known ones', async () => {
    const { code, stderr } = await runCliHere(['pkg'], { cwd: dir });
    expect(code).toBe(2);
    expect(stderr).toContain("unknown command 'pkg'");
    expect(stderr).toMatch(/package +validate, build, publish, yank, search, deprecate or tag packages/);
    expect(stderr).toMatch(/registry +log in to a package registry/);
  });
});
