import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { appendFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { waitUntil, PLATFORM_LOADER } from '@agent-platform/testkit';
import { ROOT } from './platform-process.ts';
import { answerPattern, curlRequest, heredocText, shellWords, type ReadmeCommand } from './readme-shell.ts';

// Runs a README section's commands in order, as a user at the repository root would, and checks
// each answer the README shows (`# => ...`). The test names each command it expects next (by the
// start of its text), so the README and the test move together: a command added, removed or
// reordered in the README fails the test until the test follows it.

/** tsx's loader by absolute URL: the root's dev scripts (`npm run dev:oidc`) run on it. */
const TSX_LOADER = pathToFileURL(`${ROOT}node_modules/tsx/dist/loader.mjs`).href;
const CLI_MAIN = join(ROOT, 'apps/platform/src/cli/main.ts');
/**
 * `npm run <script>` of the root package.json that keep running (servers): run as package.json
 * says (`tsx <file>`), each is ready once a line of its output matches the README's answer.
 */
const SERVER_SCRIPTS = new Set(['dev:oidc']);
const ROOT_SCRIPTS = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

/** What a command printed: an HTTP answer (curl), a CLI run, or a started process's output. */
export interface StepResult {
  command: ReadmeCommand;
  status?: number;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON shapes
  json?: any;
  code?: number | null;
}

export interface StartedProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
  kill(): void;
}

export interface WalkthroughOptions {
  /** Plays the repository root: relative files (`registry.toml`, `examples/...`) live here; `$PWD`. */
  dir: string;
  /** `$HOME` of the CLI (printed as `~`); never the real home. */
  home: string;
  /** README addresses to the ones this run uses (`127.0.0.1:4210` -> a free port). */
  addresses: Record<string, string>;
  /** Variables set before the section (those of earlier README sections: `$B`, `$H`). */
  vars: Record<string, string>;
  /**
   * `npm start` at the root, or `npm start -- <args>` (`args`, e.g. `['--config', 'x.toml']`):
   * (re)starts the all-in-one platform; resolves with its output so far.
   */
  startPlatform(args: string[]): Promise<string>;
  /** `createdb <name>`: makes the database on the PostgreSQL the section's addresses point at. */
  createdb?(name: string): Promise<void>;
}

export interface Walkthrough {
  vars: Record<string, string>;
  /** Processes started by `npm start -w apps/<name>` or `npm run dev:oidc`: the test kills them at the end. */
  processes: StartedProcess[];
  /**
   * Runs the next README command, which must start with `expected`, and checks its answer.
   * `value` supplies a placeholder assignment (`AGENT=<agent id>`); `untilMs` repeats a request
   * until its answer matches (something the README says happens within a while).
   */
  next(expected: string, options?: { value?: string; untilMs?: number }): Promise<StepResult>;
  /** The commands not run yet: `[]` once the test has followed the whole section. */
  remaining(): string[];
}

export function createWalkthrough(commands: readonly ReadmeCommand[], options: WalkthroughOptions): Walkthrough {
  const rewrite = (text: string) => Object.entries(options.addresses).reduce((t, [from, to]) => t.split(from).join(to), text);
  const steps = commands.map((c) => ({
    original: c,
    command: {
      ...c,
      text: rewrite(c.text),
      ...(c.heredoc === undefined ? {} : { heredoc: { ...c.heredoc, body: rewrite(c.heredoc.body) } }),
      ...(c.answer === undefined ? {} : { answer: rewrite(c.answer) }),
    },
  }));
  const vars: Record<string, string> = { PWD: options.dir, HOME: options.home, ...options.vars };
  /** Names set with `export`: what bash passes to the programs a command starts. */
  const exported = new Set<string>();
  const processes: StartedProcess[] = [];
  let position = 0;

  const where = (c: ReadmeCommand) => `${c.file}:${c.line} \`${c.text.split("\n")[0]}\``;

  function checkAnswer(c: ReadmeCommand, result: StepResult): void {
    if (c.answer === undefined) return;
    const { status, pattern } = answerPattern(c.answer);
    if (status !== undefined && result.status !== status)
      throw new Error(`${where(c)}: the README answers ${status}, the command got ${result.status}: ${result.text}`);
    if (!pattern.test(result.text.trim())) throw new Error(`${where(c)}: the README answers\n  ${c.answer}\nbut the command printed\n  ${result.text}`);
  }

  async function curl(c: ReadmeCommand, words: string[]): Promise<StepResult> {
    const request = curlRequest(words);
    const res = await fetch(request.url, { method: request.method, headers: request.headers, body: request.body ?? null });
    if (request.output !== undefined) {
      // `curl -o FILE` prints nothing; the bytes land in the reader's directory.
      await writeFile(join(options.dir, request.output), new Uint8Array(await res.arrayBuffer()));
      return { command: c, status: res.status, text: '' };
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { command: c, status: res.status, text, json };
  }

  async function cli(c: ReadmeCommand, args: string[], stdin: string | undefined): Promise<StepResult> {
    const env = { PATH: process.env.PATH ?? '', HOME: options.home, AP_CLI_CONFIG_DIR: join(options.home, '.config', 'agent-platform') };
    const result = await runToEnd(c, ['--import', PLATFORM_LOADER, CLI_MAIN, ...args], env, 120_000, stdin);
    return { ...result, text: result.text.split(options.home).join('~') };
  }

  /**
   * `node <file> [args]`: a script of the repository run to its end, from the reader's directory,
   * with the variables the section exported in its environment (as bash passes them).
   */
  async function script(c: ReadmeCommand, file: string, args: string[]): Promise<StepResult> {
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: options.home };
    for (const name of exported) env[name] = vars[name]!;
    return runToEnd(c, [file, ...args], env, 120_000);
  }

  /**
   * `node <args>` in the reader's directory with `stdin` on its standard input, to its end within
   * `timeoutMs`: its stdout, or an error with everything it printed.
   */
  async function runToEnd(c: ReadmeCommand, args: string[], env: Record<string, string>, timeoutMs: number, stdin = ''): Promise<StepResult> {
    const child = spawn(process.execPath, args, { cwd: options.dir, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.stdin.end(stdin);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    clearTimeout(timer);
    if (code !== 0) throw new Error(`${where(c)} exited ${code}:\n${stdout}${stderr}`);
    return { command: c, code, text: stdout };
  }

  async function startApp(c: ReadmeCommand, app: string, args: string[]): Promise<StepResult> {
    // npm start -w runs in the workspace's directory.
    return startServer(c, PLATFORM_LOADER, join(ROOT, app, 'src/main.ts'), join(ROOT, app), args, (output) => /listening on /.test(output));
  }

  /** `npm run <script> -- <args>` of SERVER_SCRIPTS: ready once its output shows the README's answer. */
  async function runServerScript(c: ReadmeCommand, script: string, args: string[]): Promise<StepResult> {
    const entry = /^tsx (\S+)$/.exec(ROOT_SCRIPTS[script] ?? '')?.[1];
    if (entry === undefined) throw new Error(`${where(c)}: package.json script '${script}' is not 'tsx <file>'`);
    if (c.answer === undefined) throw new Error(`${where(c)}: a server script needs the README's answer to know it is ready`);
    const { pattern } = answerPattern(c.answer);
    return startServer(c, TSX_LOADER, join(ROOT, entry), ROOT, args, (output) => output.split('\n').some((l) => pattern.test(l.trim())));
  }

  async function startServer(c: ReadmeCommand, loader: string, entry: string, cwd: string, args: string[], ready: (output: string) => boolean): Promise<StepResult> {
    let output = '';
    const child = spawn(process.execPath, ['--import', loader, entry, ...args], { cwd, env: { PATH: process.env.PATH ?? '' } });
    child.stdout.on('data', (b: Buffer) => (output += b.toString()));
    child.stderr.on('data', (b: Buffer) => (output += b.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    processes.push({ child, output: () => output, exited, kill: () => void (child.exitCode === null && child.kill('SIGKILL')) });
    await waitUntil(
      () => {
        if (child.exitCode !== null) throw new Error(`${where(c)} exited ${child.exitCode}:\n${output}`);
        return ready(output);
      },
      { timeoutMs: 90_000, intervalMs: 50, message: `${where(c)} to be ready (${output})` },
    );
    return lineResult(c, output);
  }

  /**
   * `node -e '<script>' [args]` at the root: the script's require() finds the repository's
   * packages (better-sqlite3), as it does for a reader in the checkout, though the test's root is
   * a temporary directory.
   */
  async function nodeEval(c: ReadmeCommand, args: string[]): Promise<StepResult> {
    return runToEnd(c, args, { PATH: process.env.PATH ?? '', NODE_PATH: join(ROOT, 'node_modules') }, 60_000);
  }

  /** A long-running process answers with one line of its output: the line the README shows. */
  function lineResult(c: ReadmeCommand, output: string): StepResult {
    const lines = output.split('\n');
    const shown = c.answer === undefined ? undefined : lines.find((l) => answerPattern(c.answer!).pattern.test(l.trim()));
    return { command: c, text: shown ?? output };
  }

  async function run(c: ReadmeCommand, value: string | undefined): Promise<StepResult> {
    const file = /^cat (>>?) (\S+) <<'?[A-Z]+'?$/.exec(c.text);
    if (file !== null && c.heredoc !== undefined) {
      const text = heredocText(c.heredoc, vars);
      const path = join(options.dir, file[2]!);
      await (file[1] === '>>' ? appendFile(path, text) : writeFile(path, text));
      return { command: c, text: '' };
    }
    // `AGENT=<agent id>`, `export KEY=reg_sk_...`: a value the reader pastes from an answer above.
    const pasted = /^(?:export )?([A-Za-z_]\w*)=(\S*(?:\.\.\.|<[a-z][a-z ]*>)\S*)(?:\s+#.*)?$/.exec(c.text);
    if (pasted !== null) {
      const [, name, written] = pasted;
      if (value === undefined) throw new Error(`${where(c)}: a placeholder the test must fill ({ value })`);
      if (!answerPattern(written!).pattern.test(value)) throw new Error(`${where(c)}: '${value}' does not fit '${written}'`);
      vars[name!] = value;
      if (c.text.startsWith('export ')) exported.add(name!);
      return { command: c, text: '' };
    }
    if (value !== undefined) throw new Error(`${where(c)}: only a placeholder assignment takes a value`);
    const pipeline = shellWords(c.text, vars);
    const [first, second] = pipeline;
    if (first === undefined || first.length === 0) throw new Error(`${where(c)}: empty command`);
    const assignment = /^([A-Za-z_]\w*)=([\s\S]*)$/.exec((first[0] === 'export' ? first.slice(1) : first).join(' '));
    if (pipeline.length === 1 && assignment !== null && (first[0] === 'export' ? first.length === 2 : first.length === 1)) {
      vars[assignment[1]!] = assignment[2]!;
      if (first[0] === 'export') exported.add(assignment[1]!);
      return { command: c, text: '' };
    }
    if (second !== undefined) {
      if (pipeline.length !== 2 || first[0] !== 'printf' || first[1] !== '%s' || first.length !== 3)
        throw new Error(`${where(c)}: only 'printf %s "$X" | command' is understood`);
      const [npm, runWord, cliWord, dashes, ...args] = second;
      if (npm !== 'npm' || runWord !== 'run' || cliWord !== 'cli' || dashes !== '--') throw new Error(`${where(c)}: only a pipe into npm run cli is understood`);
      return cli(c, args, first[2]);
    }
    if (first[0] === 'curl') return curl(c, first);
    if (first[0] === 'createdb' && first.length === 2) {
      if (options.createdb === undefined) throw new Error(`${where(c)}: this section's test makes no database`);
      await options.createdb(first[1]!);
      return { command: c, text: '' };
    }
    if (first.join(' ') === 'npm start') return lineResult(c, await options.startPlatform([]));
    if (first[0] === 'node' && first[1] === '-e' && first.length >= 3) return nodeEval(c, first.slice(1));
    if (first[0] === 'node' && /^[\w./-]+\.m?js$/.test(first[1] ?? '')) return script(c, first[1]!, first.slice(2));
    const [npm, a, b, d, e, ...rest] = first;
    if (npm === 'npm' && a === 'start' && b === '--') return lineResult(c, await options.startPlatform(first.slice(3)));
    if (npm === 'npm' && a === 'run' && b === 'cli' && d === '--') return cli(c, [e!, ...rest], undefined);
    if (npm === 'npm' && a === 'run' && SERVER_SCRIPTS.has(b!) && (d === undefined || d === '--')) return runServerScript(c, b!, first.slice(4));
    if (npm === 'npm' && a === 'start' && b === '-w' && d !== undefined && e === '--') return startApp(c, d, rest);
    throw new Error(`${where(c)}: the README runner does not know this command`);
  }

  return {
    vars,
    processes,
    async next(expected, { value, untilMs } = {}) {
      const step = steps[position];
      if (step === undefined) throw new Error(`the README section has no command left; the test expected '${expected}'`);
      if (!step.original.text.startsWith(expected))
        throw new Error(`${where(step.original)} is the next command of the README section; the test expected '${expected}'`);
      position++;
      const c = step.command;
      if (untilMs === undefined) {
        const result = await run(c, value);
        if (result.status !== undefined && result.status >= 400 && (c.answer === undefined || answerPattern(c.answer).status === undefined))
          throw new Error(`${where(c)} answered ${result.status} where the README shows no error: ${result.text}`);
        checkAnswer(c, result);
        return result;
      }
      const deadline = Date.now() + untilMs;
      for (;;) {
        const result = await run(c, value);
        try {
          checkAnswer(c, result);
          return result;
        } catch (error) {
          if (Date.now() > deadline) throw new Error(`after ${untilMs} ms: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    },
    remaining: () => steps.slice(position).map((s) => where(s.original)),
  };
}
