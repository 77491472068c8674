import { runMain, runService } from '@agent-platform/engines';
import { composeChannelBridge } from './compose.ts';

// The channel bridge alone (fleet member): `npm start -w apps/channel-bridge -- --config <file>`.
// Only entry points read argv and env (STYLE §4).
runMain(() =>
  runService({ name: 'channel-bridge', argv: process.argv.slice(2), env: process.env, cwd: process.cwd(), compose: composeChannelBridge }),
);
