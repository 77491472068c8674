import { Errors } from '@agent-platform/domain';
import type { FastifyRequest } from 'fastify';
import type { ApiApp } from '../api-app.ts';

type Done = (error: Error | null, body?: unknown) => void;

/**
 * Request bodies are JSON (spec §Endpoints). Fastify's parsers are replaced by two:
 * - `application/json` (any parameters, e.g. charset): parsed with Fastify's prototype-poisoning
 *   safe parser; invalid JSON is 422 `MalformedBody`; an empty body is "no body".
 * - everything else: 415 `UnsupportedMediaType` when a Content-Type is present (spec §Errors
 *   case rule 3); a body sent with NO Content-Type is parsed as JSON, since the spec refuses only
 *   a content type that is present and not JSON.
 * Parsing happens after every onRequest hook, so 401/403 always win over 415/422.
 */
export function installContentTypeParsers(app: ApiApp): void {
  const safeJson = app.getDefaultJsonParser('error', 'error');
  const parseJson = (request: FastifyRequest, text: string, done: Done): void => {
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    void safeJson(request, text, (error: Error | null, value?: unknown) => {
      if (error === null) done(null, value);
      else done(Errors.malformedBody(`request body is not valid JSON: ${error.message}`));
    });
  };
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => parseJson(request, body as string, done));
  app.addContentTypeParser('*', { parseAs: 'string' }, (request, body, done) => {
    const contentType = request.headers['content-type'];
    if (contentType !== undefined && contentType.trim() !== '') done(Errors.unsupportedMediaType(contentType));
    else if ((body as string).trim() === '') done(null, undefined);
    else done(Errors.missingContentType());
  });
}
