import { runMain, runService } from '@agent-platform/engines';
import { composeAgentWorker } from './compose.ts';

// An agent worker alone (fleet member): `npm start -w apps/agent-worker -- --config <file>`.
// Only entry points read argv and env (STYLE §4).
runMain(() =>
  runService({ name: 'agent-worker', argv: process.argv.slice(2), env: process.env, cwd: process.cwd(), compose: composeAgentWorker }),
);
