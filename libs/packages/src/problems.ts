import type { PackageProblem } from '@agent-platform/contracts';
import type { RuleId } from './rules.ts';

/** The field of a problem about a file as a whole (syntax, missing file). */
export const WHOLE_FILE = '(file)';
/** The field of a problem about a markdown payload's body. */
export const BODY = '(body)';

/** Where the checks of one file report: problems refuse the package, warnings do not. */
export interface FileProblems {
  readonly file: string;
  add(field: string, rule: RuleId, message: string): void;
  warn(field: string, rule: RuleId, message: string): void;
}

/** Collects every problem of a package, so that an author fixes all of them in one pass. */
export interface ProblemList {
  readonly problems: PackageProblem[];
  readonly warnings: PackageProblem[];
  in(file: string): FileProblems;
}

export function createProblemList(): ProblemList {
  const problems: PackageProblem[] = [];
  const warnings: PackageProblem[] = [];
  return {
    problems,
    warnings,
    in: (file) => ({
      file,
      add: (field, rule, message) => problems.push({ file, field, rule, message }),
      warn: (field, rule, message) => warnings.push({ file, field, rule, message }),
    }),
  };
}

/** `file: field: message [rule]`, the CLI's line format. */
export function formatProblem(problem: PackageProblem): string {
  return `${problem.file}: ${problem.field}: ${problem.message} [${problem.rule}]`;
}

/** Wraps `p` to count the problems added through it: a checker returns its result only when it found none. */
export function countingProblems(p: FileProblems): FileProblems & { count(): number } {
  let count = 0;
  return {
    file: p.file,
    add: (field, rule, message) => {
      count++;
      p.add(field, rule, message);
    },
    warn: (field, rule, message) => p.warn(field, rule, message),
    count: () => count,
  };
}

/** The first line of a parser's message plus where it stopped, without echoing the source. */
export function syntaxMessage(error: unknown): string {
  const first = ((error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '').replace(
    /^Invalid TOML document: /,
    '',
  );
  const { line, column } = (typeof error === 'object' && error !== null ? error : {}) as {
    line?: unknown;
    column?: unknown;
  };
  return typeof line === 'number' && typeof column === 'number'
    ? `${first} (line ${line}, column ${column})`
    : first;
}
