import { runMain, runProcess } from './run-process.ts';

// The api alone (distributed deployment). Only entry points read argv and env (STYLE §4).
runMain(() => runProcess({ name: 'api', argv: process.argv.slice(2), env: process.env, cwd: process.cwd() }));
