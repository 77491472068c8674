import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A directory of package sources for a test (DECISIONS D4 layout), removed by `close`. */
export interface PackageShelf {
  readonly dir: string;
  /** Writes an agent-template package `name` (an agent of that name once installed). */
  agent(name: string, options?: { version?: string; body?: string }): Promise<string>;
  /** Writes a workflow-template package `name` with this workflow.json content (description defaulted). */
  workflow(name: string, workflow: Record<string, unknown>, options?: { version?: string }): Promise<string>;
  close(): Promise<void>;
}

export async function createPackageShelf(): Promise<PackageShelf> {
  const dir = await mkdtemp(join(tmpdir(), 'ap-packages-'));
  const write = async (name: string, type: string, version: string, file: string, text: string): Promise<string> => {
    const root = join(dir, name);
    await mkdir(join(root, 'payload'), { recursive: true });
    const manifest = [
      '[package]',
      `type = "${type}"`,
      `name = "${name}"`,
      `title = "Title of ${name}"`,
      `version = "${version}"`,
      `description = "The ${type} ${name}."`,
      'license = "Apache-2.0"',
      'min_platform_version = "0.1.0"',
      '',
    ].join('\n');
    await writeFile(join(root, 'package.toml'), manifest);
    await writeFile(join(root, 'payload', file), text);
    return root;
  };
  return {
    dir,
    agent: (name, options = {}) =>
      write(name, 'agent-template', options.version ?? '1.0.0', 'AGENT.md', `---\ndescription: The ${name} agent.\n---\n${options.body ?? `You are ${name}.`}\n`),
    workflow: (name, workflow, options = {}) =>
      write(name, 'workflow-template', options.version ?? '1.0.0', 'workflow.json', JSON.stringify({ description: `The ${name} workflow.`, ...workflow }, null, 2)),
    close: () => rm(dir, { recursive: true, force: true }),
  };
}
