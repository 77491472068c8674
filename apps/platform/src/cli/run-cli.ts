import { EXIT_OK, EXIT_USAGE, type CliIo, type CommandGroup } from './command.ts';
import { COMMANDS } from './commands.ts';

/** `agent-platform <group> <args...>`: dispatches to the group's command; returns the exit code. */
export async function runCli(
  argv: readonly string[],
  io: CliIo,
  commands: Readonly<Record<string, CommandGroup>> = COMMANDS,
): Promise<number> {
  const [group, ...args] = argv;
  if (group === undefined) {
    io.err(usage(commands));
    return EXIT_USAGE;
  }
  if (group === '--help' || group === '-h' || group === 'help') {
    io.out(usage(commands));
    return EXIT_OK;
  }
  const command = commands[group];
  if (command === undefined) {
    io.err(`agent-platform: unknown command '${group}'`);
    io.err(usage(commands));
    return EXIT_USAGE;
  }
  return command.run(args, io);
}

function usage(commands: Readonly<Record<string, CommandGroup>>): string {
  const width = Math.max(...Object.keys(commands).map((name) => name.length));
  const lines = Object.entries(commands).map(
    ([name, command]) => `  ${name.padEnd(width)}  ${command.summary}`,
  );
  return [
    'Usage: agent-platform <command> [arguments]',
    '',
    'Commands:',
    ...lines,
    '',
    'Run agent-platform <command> --help for details.',
  ].join('\n');
}
