import { readSecretLine } from './read-secret.ts';
import { runCli } from './run-cli.ts';

/**
 * Writes lines to `stream` until its reader goes away (`agent-platform ... | head -1` closes the
 * pipe: EPIPE), then drops the rest quietly. The command itself still finishes (a restore must not
 * stop half way because nobody reads its progress) and exits with its own status.
 */
function lineWriter(stream: NodeJS.WriteStream): (line: string) => void {
  let open = true;
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
    open = false;
  });
  return (line) => {
    if (open && stream.writable) stream.write(`${line}\n`);
  };
}

const out = lineWriter(process.stdout);
const err = lineWriter(process.stderr);

// `npm run cli -- <command> ...` at the repository root. Only entry points read argv (STYLE §4).
runCli(process.argv.slice(2), {
  cwd: process.cwd(),
  out,
  err,
  env: process.env,
  readSecret: (prompt) => readSecretLine(process.stdin, process.stderr, prompt),
}).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    err(`agent-platform: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  },
);
