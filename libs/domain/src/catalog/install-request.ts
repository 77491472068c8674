import { isAbsolute } from 'node:path';
import type { PackageType } from '@agent-platform/contracts';
import { Errors } from '../errors/errors.ts';
import type { RegistryRequest } from './registry-install.ts';

/** `POST /catalog/install` (DECISIONS D5): a local directory, a registry name, or a registry collection. */
export interface InstallRequest {
  path?: string;
  name?: string;
  /** Semver constraint for `name`; default `*`. */
  version?: string;
  collection?: string;
  /** Agents installed (or upgraded) by this request end up Running, after the contract check. */
  activate?: boolean;
  /**
   * The requested package must be of this type (POST /competencies/install, /skills/install): any
   * other is a 400 ValidationError before anything is written. Not part of POST /catalog/install.
   */
  type?: PackageType;
  /**
   * The caller may install integration packages from a directory (action IntegrationInstall):
   * such a package names a program the agent workers start, and carries no registry signature.
   * Otherwise a plan that brings one from a path is refused with 403 before anything is written.
   */
  integrationsFromPath?: boolean;
}

type RequestKind = { kind: 'path'; path: string } | { kind: 'registry'; request: RegistryRequest };

/** Exactly one of `path`, `name` and `collection`; `version` goes with `name` only. */
export function requestKind(request: InstallRequest): RequestKind {
  const given = (['path', 'name', 'collection'] as const).filter((key) => request[key] !== undefined);
  if (given.length > 1) throw Errors.validation(`give one of path, name and collection, not ${given.join(' and ')}`, { given });
  if (request.version !== undefined && request.name === undefined)
    throw Errors.validation('version goes with name: the semver constraint of the package to install from the registry');
  if (request.type !== undefined && request.path === undefined)
    throw Errors.validation(`this route installs ${request.type} packages from a path only`);
  if (request.name !== undefined) return { kind: 'registry', request: { name: request.name, version: request.version } };
  if (request.collection !== undefined) return { kind: 'registry', request: { collection: request.collection } };
  if (request.path === undefined)
    throw Errors.validation('path, name or collection is required: a package directory, a registry package name, or a registry collection');
  if (!isAbsolute(request.path))
    throw Errors.validation(
      `path must be absolute (the platform does not share your working directory): ${request.path}`,
      {
        path: request.path,
      },
    );
  return { kind: 'path', path: request.path };
}
