import type { ErrorCategory } from '@agent-platform/contracts';

/**
 * An error of the registry's package service, in the spec's categories. Not a `PlatformError`:
 * this library sits below the domain (like libs/packages' `PackageError`); the api's one error
 * handler maps any error carrying a known `category` to its status and envelope, so the
 * registry's answers look like every other surface's.
 */
export class RegistryError extends Error {
  readonly category: ErrorCategory;
  readonly details: Record<string, unknown> | undefined;

  constructor(category: ErrorCategory, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = 'RegistryError';
    this.category = category;
    this.details = details;
  }
}

/** The registry's refusals; messages name what is wrong and, where it helps, what to do. */
export const RegistryErrors = {
  /** Same wording as the platform's `Errors.notFound`, so clients match one shape. */
  notFound: (kind: 'package' | 'version' | 'dist-tag' | 'readme' | 'team' | 'team member', id: string) =>
    new RegistryError('NotFound', `${kind} '${id}' not found`, { kind, id }),
  /** No pending invitation (to a team, or to own a package) for the caller: 404, the message saying whose. */
  noInvitation: (message: string, details: Record<string, unknown>) => new RegistryError('NotFound', message, { kind: 'invitation', ...details }),
  validation: (message: string, details?: Record<string, unknown>) =>
    new RegistryError('ValidationError', message, details),
  conflict: (message: string, details?: Record<string, unknown>) =>
    new RegistryError('Conflict', message, details),
  /** An identity acting on a package it does not own (403; the role check itself is the auth hook's). */
  forbidden: (message: string, details?: Record<string, unknown>) =>
    new RegistryError('PermissionDenied', message, details),
  internal: (message: string) => new RegistryError('Internal', message),
  /** The archive store (a bucket, a disk) failed to answer: an upstream error (spec §Errors: 502). */
  storage: (message: string, details?: Record<string, unknown>) =>
    new RegistryError('ProviderError', message, details),
};
