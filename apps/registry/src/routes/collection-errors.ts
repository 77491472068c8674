import { Errors, type PlatformError } from '@agent-platform/domain';
import { formatProblem } from '@agent-platform/packages';
import type { CollectionFailure } from '@agent-platform/registry-core';

/** A refused collection operation as the spec's error (docs/registry-search.md "Errors"). */
export function collectionError(failure: CollectionFailure): PlatformError {
  switch (failure.kind) {
    case 'invalid': {
      const heading = failure.name === null ? 'COLLECTION.toml was refused:' : `COLLECTION.toml for '${failure.name}' was refused:`;
      return Errors.validation([heading, ...failure.problems.map((p) => `  - ${formatProblem(p)}`)].join('\n'), { problems: failure.problems });
    }
    case 'not-found':
      return Errors.notFound('collection', failure.name);
    case 'duplicate':
      return Errors.conflict(`collection '${failure.name}' already exists: PUT /collections/${failure.name} publishes a new version`, {
        kind: 'collection',
        id: failure.name,
      });
    case 'conflict':
      return Errors.conflict(`collection '${failure.name}' was changed concurrently: read it again and retry`, { kind: 'collection', id: failure.name });
    case 'forbidden':
      return Errors.permissionDenied(`'${failure.identity}' is not an owner of collection '${failure.name}' (owners and registry-admin may change it)`, {
        kind: 'collection',
        id: failure.name,
      });
  }
}
