import { ERROR_CATEGORIES, type ErrorCategory, type ErrorEnvelope } from '@agent-platform/contracts';
import { Errors, PlatformError } from '@agent-platform/domain';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiApp } from '../api-app.ts';
import { STATUS } from './error-status.ts';
import { flatErrorFor } from './flat-errors.ts';
import { httpStatusOverride, withHttpStatus } from './http-status.ts';
import { pathOf } from './route-label.ts';
import { schemaErrorToPlatformError, type SchemaError, type SchemaPart } from './schema-errors.ts';

export interface ErrorReply {
  status: number;
  body: ErrorEnvelope;
  headers: Record<string, string>;
  /** True for failures the operator must see (5xx): logged in full with the stack. */
  unexpected: boolean;
}

const CATEGORIES = new Set<string>(ERROR_CATEGORIES);

/** An error carrying one of our categories: a PlatformError, or a ConfigError from libs/config. */
interface CategorizedError {
  category: ErrorCategory;
  message: string;
  details?: Record<string, unknown> | undefined;
  problems?: string[];
  retryAfterSecs?: number | undefined;
}

function isCategorized(error: unknown): error is CategorizedError {
  return typeof error === 'object' && error !== null && CATEGORIES.has(String((error as { category?: unknown }).category));
}

/** Fastify's own errors, by code, in the spec's terms. */
function fromFastify(error: { code?: unknown; statusCode?: unknown; message?: unknown; validation?: unknown; validationContext?: unknown }): CategorizedError | null {
  if (Array.isArray(error.validation)) {
    return schemaErrorToPlatformError(error.validation as SchemaError[], (error.validationContext ?? 'body') as SchemaPart);
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return Errors.unsupportedMediaType('(unparseable)');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return withHttpStatus(new PlatformError('SizeLimitExceeded', 'request body is over the size limit'), 413);
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return Errors.malformedBody('request body is not valid JSON');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return Errors.validation('request body length does not match Content-Length');
  }
  const status = typeof error.statusCode === 'number' ? error.statusCode : 500;
  const code = typeof error.code === 'string' ? error.code : '';
  // Other client errors raised by Fastify itself (bad URL encoding, ...): safe to echo.
  if (code.startsWith('FST_') && status >= 400 && status < 500) {
    const category: ErrorCategory = status === 404 ? 'NotFound' : status === 413 ? 'SizeLimitExceeded' : status === 415 ? 'UnsupportedMediaType' : 'ValidationError';
    return withHttpStatus(new PlatformError(category, String(error.message)), status === 413 ? 413 : STATUS[category]);
  }
  return null;
}

/**
 * Turns any thrown value into the spec's error envelope and status. Everything not recognised
 * is 500 `Internal` with a generic message: internals never reach the client.
 */
export function toErrorReply(error: unknown): ErrorReply {
  const known = isCategorized(error) ? error : typeof error === 'object' && error !== null ? fromFastify(error) : null;
  if (known === null) {
    return { status: 500, body: { error: { category: 'Internal', message: 'internal error' } }, headers: {}, unexpected: true };
  }
  const status = httpStatusOverride(known) ?? STATUS[known.category];
  const details = known.details ?? (Array.isArray(known.problems) ? { problems: known.problems } : undefined);
  const body: ErrorEnvelope = { error: { category: known.category, message: known.message } };
  if (details !== undefined) body.error.details = details;
  const headers: Record<string, string> = {};
  // D7: a 401 tells the client how to authenticate.
  if (known.category === 'AuthError') headers['www-authenticate'] = 'Bearer';
  if (known.category === 'RateLimited') headers['retry-after'] = String(Math.max(1, Math.ceil(known.retryAfterSecs ?? 1)));
  return { status, body, headers, unexpected: status >= 500 };
}

/** Installs the one error handler and the not-found handler on the root instance. */
export function installErrorHandling(app: ApiApp): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const mapped = toErrorReply(error);
    if (mapped.unexpected) request.log.error({ err: error, category: mapped.body.error.category }, 'request failed');
    // Serialized here, not by the route's response schema: that schema describes the route's
    // success body, and DuplicateInvocation is an error envelope sent with status 200.
    const body = flatErrorFor(request, error) ?? mapped.body;
    return reply.code(mapped.status).headers(mapped.headers).type('application/json; charset=utf-8').send(JSON.stringify(body));
  });
  // Runs after the onRequest hooks (authentication included), so an unknown path without a
  // credential is 401, not 404 (spec §Authentication rule 1).
  app.setNotFoundHandler((request) => {
    throw Errors.notFound('route', `${request.method} ${pathOf(request)}`);
  });
}
