import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/**
 * AWS Signature Version 4 check of a request's `Authorization` header against the secrets of
 * known key ids: what S3 does before anything else, and what s3rver leaves out (it checks the key
 * id only). Returns the S3 error code to answer with, or undefined when the signature holds (or
 * the request is unsigned, left to the server). The payload hash is taken from the signed
 * `x-amz-content-sha256` header as sent, not recomputed from the body.
 */
export function sigV4Fault(req: IncomingMessage, secrets: ReadonlyMap<string, string>): string | undefined {
  const authorization = req.headers.authorization;
  if (authorization === undefined) return undefined;
  const match =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(
      authorization,
    );
  if (match === null) return 'AuthorizationHeaderMalformed';
  const [, keyId = '', date = '', region = '', service = '', signedHeaders = '', signature = ''] = match;
  const secret = secrets.get(keyId);
  if (secret === undefined) return 'InvalidAccessKeyId';
  const [path = '/', query = ''] = (req.url ?? '/').split('?', 2);
  const headerLines = signedHeaders
    .split(';')
    .map(
      (name) =>
        `${name}:${String(req.headers[name] ?? '')
          .trim()
          .replace(/\s+/g, ' ')}\n`,
    )
    .join('');
  const canonicalRequest = [
    req.method ?? 'GET',
    path,
    canonicalQuery(query),
    headerLines,
    signedHeaders,
    String(req.headers['x-amz-content-sha256'] ?? 'UNSIGNED-PAYLOAD'),
  ].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = [
    'AWS4-HMAC-SHA256',
    String(req.headers['x-amz-date'] ?? ''),
    scope,
    sha256(canonicalRequest),
  ].join('\n');
  let key: Buffer = hmac(`AWS4${secret}`, date);
  for (const part of [region, service, 'aws4_request']) key = hmac(key, part);
  const expected = hmac(key, stringToSign);
  return timingSafeEqual(expected, Buffer.from(signature, 'hex')) ? undefined : 'SignatureDoesNotMatch';
}

function canonicalQuery(query: string): string {
  if (query === '') return '';
  return query
    .split('&')
    .map((pair) => {
      const at = pair.indexOf('=');
      const [name, value] = at < 0 ? [pair, ''] : [pair.slice(0, at), pair.slice(at + 1)];
      return [encode(decodeURIComponent(name)), encode(decodeURIComponent(value.replace(/\+/g, '%20')))];
    })
    .sort(([a = '', x = ''], [b = '', y = '']) => (a === b ? (x < y ? -1 : x > y ? 1 : 0) : a < b ? -1 : 1))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
}

function encode(text: string): string {
  return encodeURIComponent(text).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function hmac(key: string | Buffer, text: string): Buffer {
  return createHmac('sha256', key).update(text).digest();
}
