import { runMain, runService } from '@agent-platform/engines';
import { composeRegistry } from './compose.ts';

// The registry alone: `npm start -w apps/registry -- --config <file>`. It takes no work from the
// bus, so it also runs on the embedded engines. Only entry points read argv and env (STYLE §4).
runMain(() =>
  runService({
    name: 'registry',
    argv: process.argv.slice(2),
    env: process.env,
    cwd: process.cwd(),
    compose: composeRegistry,
    needsSharedBus: false,
  }),
);
