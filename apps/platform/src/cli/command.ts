/**
 * The shape of an `agent-platform <group> ...` command group. A group parses its own arguments
 * and returns the exit code: 0 success, 1 the work failed (a package with problems), 2 the
 * command line itself was wrong. Only `main.ts` touches `process`; groups write through `io`.
 */
export interface CliIo {
  /** Relative paths on the command line are resolved against this directory. */
  cwd: string;
  /** Results, one line per call. */
  out: (line: string) => void;
  /** Usage errors and failures, one line per call. */
  err: (line: string) => void;
  /** The environment (`AP_REGISTRY_URL`, `AP_REGISTRY_KEY`, `AP_CLI_CONFIG_DIR`, `HOME`); default empty. */
  env?: Record<string, string | undefined>;
  /** One secret line from standard input (a registry key), without echoing it on a terminal. */
  readSecret?: (prompt: string) => Promise<string>;
}

export interface CommandGroup {
  /** One line for `agent-platform --help`. */
  summary: string;
  /** Printed by `agent-platform <group> --help` and after a usage error. */
  usage: string;
  run(args: readonly string[], io: CliIo): Promise<number>;
}

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;
