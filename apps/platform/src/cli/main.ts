import { readSecretLine } from './read-secret.ts';
import { runCli } from './run-cli.ts';

// `npm run cli -- <command> ...` at the repository root. Only entry points read argv (STYLE §4).
runCli(process.argv.slice(2), {
  cwd: process.cwd(),
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
  readSecret: (prompt) => readSecretLine(process.stdin, process.stderr, prompt),
}).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`agent-platform: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
