import { startPlatformFixture } from '../platform-fixture.ts';
import type { BenchTarget } from '../target.ts';

/** The HTTP pipeline plus API-key authentication (key lookup and hash check), no domain work. */
export const allInOneWhoami: BenchTarget = {
  name: 'all-in-one-whoami',
  description: 'all-in-one GET /auth/whoami with an admin key (the pipeline plus auth)',
  async start({ nodeFlags }) {
    const platform = await startPlatformFixture({ nodeFlags, installAgent: false });
    return {
      urls: [platform.url],
      processes: [{ role: 'platform', pid: platform.pid }],
      request: {
        method: 'GET',
        path: '/auth/whoami',
        headers: { authorization: `Bearer ${platform.token}` },
      },
      stop: platform.stop,
    };
  },
};
