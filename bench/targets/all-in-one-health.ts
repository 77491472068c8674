import { startPlatformFixture } from '../platform-fixture.ts';
import type { BenchTarget } from '../target.ts';

/** The platform's HTTP pipeline without auth or the agent path: hooks, metrics, request log. */
export const allInOneHealth: BenchTarget = {
  name: 'all-in-one-health',
  description: 'all-in-one GET /health, no credential (the HTTP pipeline alone)',
  async start({ nodeFlags }) {
    const platform = await startPlatformFixture({ nodeFlags, installAgent: false });
    return {
      urls: [platform.url],
      processes: [{ role: 'platform', pid: platform.pid }],
      request: { method: 'GET', path: '/health' },
      stop: platform.stop,
    };
  },
};
