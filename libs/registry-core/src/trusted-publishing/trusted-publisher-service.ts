import type { RegistryTrustedPublishers, TrustedPublisher } from '@agent-platform/contracts';
import { openRegistryContext, type PackageRegistryDeps, type RegistryActor } from '../packages/registry-context.ts';
import { readTrustedPublishers, replaceTrustedPublishers } from './trusted-publishers.ts';

/** The owner side of trusted publishing: which CI identities may publish a package (docs/registry-auth.md "Trusted publishing"). */
export interface TrustedPublisherService {
  get(name: string, actor: RegistryActor): Promise<RegistryTrustedPublishers>;
  /** Replaces the whole list; an empty list turns trusted publishing off. */
  replace(name: string, publishers: readonly TrustedPublisher[], actor: RegistryActor): Promise<RegistryTrustedPublishers>;
}

export function createTrustedPublisherService(deps: PackageRegistryDeps): TrustedPublisherService {
  const ctx = openRegistryContext(deps);
  return {
    get: (name, actor) => readTrustedPublishers(ctx, name, actor),
    replace: (name, publishers, actor) => replaceTrustedPublishers(ctx, name, publishers, actor),
  };
}
