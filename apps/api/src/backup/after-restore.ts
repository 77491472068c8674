import type { BackupScope } from '@agent-platform/contracts';
import { Subjects } from '@agent-platform/contracts';
import { PlatformError } from '@agent-platform/domain';
import type { ApiDeps } from '../deps.ts';

/**
 * Brings this process in line with a store a restore just replaced (docs/backup.md "What a
 * restore does in a running platform"): the audit verifier forgets the chain it had walked, the
 * queue's schedulers follow the restored schedules, the integration hosts and channel bridges
 * reconcile with the restored records, and a full restore gets a fresh audit checkpoint (when a
 * sink is configured) recording the restored chain, unless that chain no longer reaches the latest
 * checkpoint: then verify says so until an admin or auditor supersedes it. Everything else is read from the store on
 * each use. Returns the checkpoint's name, or null.
 */
export function afterRestore(
  deps: Pick<ApiDeps, 'audit' | 'auditCheckpoints' | 'schedules' | 'bus' | 'channels' | 'logger'> & {
    /**
     * A full restore brought back the fleet agreement of the platform the archive was made on
     * (docs/scale-out.md); this process records what it holds instead. (Over HTTP a restore runs
     * only where this process is the whole platform: a fleet restores offline.)
     */
    reagreeWithFleet?: () => Promise<void>;
  },
) {
  return async (scope: BackupScope): Promise<string | null> => {
    const log = deps.logger.child({ component: 'backup' });
    deps.audit.forgetVerified();
    if (scope === 'full' && deps.reagreeWithFleet !== undefined)
      await deps.reagreeWithFleet().catch((err: unknown) => log.error({ err }, 'the fleet agreement could not be recorded again after the restore'));
    await deps.schedules
      .reconcile()
      .catch((err: unknown) => log.error({ err }, 'schedules could not be re-registered after the restore'));
    // Any notification makes every integration host reconcile all of its integrations.
    await deps.bus.notify(Subjects.integrationChanged, { integration_id: '*' }).catch(() => undefined);
    const channels = await deps.channels.list().catch(() => []);
    for (const channel of channels)
      await deps.bus.notify(Subjects.channelChanged, { channel_id: channel.id }).catch(() => undefined);
    if (scope !== 'full' || !deps.auditCheckpoints.configured) return null;
    try {
      return (await deps.auditCheckpoints.write()).name;
    } catch (err) {
      // The restored chain is shorter than the latest checkpoint: never papered over here, an admin
      // or auditor supersedes it with a reason (docs/audit.md "When verify fails").
      if (err instanceof PlatformError && err.category === 'Conflict') {
        log.warn(
          { reason: err.message },
          'the restored audit chain does not reach the latest checkpoint; verify reports it until it is superseded',
        );
      } else log.error({ err }, 'the audit checkpoint of the restored chain could not be written');
      return null;
    }
  };
}
