import { runMain, runProcess } from '@agent-platform/api';
import { composePlatformServices } from './compose.ts';

// `npm start` at the repository root: the whole platform in one process (DECISIONS D1).
// Only entry points read argv and env (STYLE §4).
runMain(() =>
  runProcess({
    name: 'platform',
    argv: process.argv.slice(2),
    env: process.env,
    cwd: process.cwd(),
    // The environment goes to the integration host: stdio servers inherit it, minus the secrets.
    services: (deps) => composePlatformServices(deps, process.env),
  }),
);
