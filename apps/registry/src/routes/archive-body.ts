import { Transform, type TransformCallback } from 'node:stream';
import { withHttpStatus } from '@agent-platform/api';
import { RegistryError } from '@agent-platform/registry-core';
import type { FastifyRequest } from 'fastify';
import type { RegistryApp } from '../registry-app.ts';

/** What `POST /packages` accepts: a gzipped tar (D4). `application/octet-stream` for generic clients. */
export const ARCHIVE_TYPES = ['application/gzip', 'application/x-gzip', 'application/octet-stream'] as const;

/** 413 with category SizeLimitExceeded (DECISIONS D7), naming `[registry] max_archive_bytes`. */
function tooLarge(bytes: number, limit: number, declared: boolean) {
  return withHttpStatus(
    new RegistryError(
      'SizeLimitExceeded',
      `archive of ${declared ? '' : 'at least '}${bytes} bytes is over [registry] max_archive_bytes (${limit})`,
      {
        [declared ? 'declared_bytes' : 'received_bytes']: bytes,
        limit_bytes: limit,
      },
    ),
    413,
  );
}

function mediaType(request: FastifyRequest): string {
  return (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

/**
 * The body of a publish, in this route's scope only (every other registry route keeps the api's
 * JSON-only parsers): the raw archive bytes as a Buffer. Before a byte is buffered, a preParsing
 * hook answers 415 for another content type and 413 for a declared length over the limit, then
 * counts a chunked body as it streams and stops it at the limit: an oversized archive is never
 * held in memory whole. Runs after the auth hook (onRequest), so an unauthorized caller sees
 * 401/403 first.
 */
export function installArchiveBody(scope: RegistryApp, maxBytes: () => number): void {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser([...ARCHIVE_TYPES], { parseAs: 'buffer' }, (_request, body, done) =>
    done(null, body),
  );
  scope.addContentTypeParser('*', (request, _payload, done) => done(unsupported(request), undefined));
  scope.addHook('preParsing', async (request, _reply, payload) => {
    if (!(ARCHIVE_TYPES as readonly string[]).includes(mediaType(request))) throw unsupported(request);
    const limit = maxBytes();
    const declared = Number(request.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) throw tooLarge(declared, limit, true);
    let seen = 0;
    return payload.pipe(
      new Transform({
        transform(chunk: Buffer, _encoding: BufferEncoding, next: TransformCallback) {
          seen += chunk.length;
          if (seen > limit) next(tooLarge(seen, limit, false));
          else next(null, chunk);
        },
      }),
    );
  });
}

function unsupported(request: FastifyRequest): RegistryError {
  const type = request.headers['content-type'];
  return new RegistryError(
    'UnsupportedMediaType',
    type === undefined || type.trim() === ''
      ? `a publish needs Content-Type: application/gzip (it had none)`
      : `unsupported content type '${type.slice(0, 100)}': a publish sends the archive as ${ARCHIVE_TYPES.join(', ')}`,
  );
}
