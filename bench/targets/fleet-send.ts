import { startFleetTarget } from '../fleet-fixture.ts';
import type { BenchTarget } from '../target.ts';

/**
 * The same send as all-in-one-send, through a fleet: 2 api processes and 2 agent workers over
 * NATS, the embedded store shared through one data_dir, the `local` echo model. autocannon
 * spreads its connections over both api nodes.
 */
export const fleetSend: BenchTarget = {
  name: 'fleet-send',
  description: 'fleet (2 api + 2 agent workers over NATS) POST /agents/{id}/send, local provider',
  goal: { kind: 'throughput-ratio', against: 'hello-world', atLeast: 0.04, label: 'fleet send >= 0.04x hello world' },
  start: ({ nodeFlags }) => startFleetTarget({ nodeFlags, apis: 2, workers: 2, model: { kind: 'local' } }),
};
