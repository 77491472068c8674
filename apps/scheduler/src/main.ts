import { runMain, runService } from '@agent-platform/engines';
import { composeScheduler } from './compose.ts';

// The scheduler alone (fleet member): `npm start -w apps/scheduler -- --config <file>`.
// Only entry points read argv and env (STYLE §4).
runMain(() => runService({ name: 'scheduler', argv: process.argv.slice(2), env: process.env, cwd: process.cwd(), compose: composeScheduler }));
