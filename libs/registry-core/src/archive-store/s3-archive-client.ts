import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { checkArchiveKey, type ArchiveStore } from './archive-store.ts';
import { DEFAULT_S3_REQUEST_TIMEOUT_MS, type RegistryS3Settings, type S3ArchiveStoreOptions } from './s3-archive-store.ts';

/** Codes S3 answers when the key id or the secret is wrong, or the key may not use the bucket. */
const CREDENTIAL_CODES = new Set([
  'SignatureDoesNotMatch',
  'InvalidAccessKeyId',
  'AccessDenied',
  'InvalidToken',
  'ExpiredToken',
  'AuthorizationHeaderMalformed',
]);

/**
 * Archives as objects of an S3-compatible bucket (`[registry.s3]`, docs/registry-storage.md).
 * `endpoint` empty = AWS for `region`; `access_key_id` empty = the SDK's default credential chain
 * (environment, shared files, instance or task role); `prefix` is prepended to every key (a `/`
 * is added when missing); `path_style` puts the bucket in the URL path, as most S3-compatible
 * servers need. Checksums are sent only where S3 requires them (`WHEN_REQUIRED`), which every
 * S3-compatible server understands; the SigV4 signature still covers the payload's SHA-256.
 * Errors name the operation, bucket and key, never the secret.
 */
export function openS3ArchiveClient(
  settings: RegistryS3Settings,
  options: S3ArchiveStoreOptions = {},
): ArchiveStore {
  const timeoutMs = options.requestTimeoutMs ?? DEFAULT_S3_REQUEST_TIMEOUT_MS;
  const lock = options.objectLock !== undefined && options.objectLock.days > 0 ? options.objectLock : undefined;
  const bucket = settings.bucket;
  const prefix = normalizePrefix(settings.prefix);
  const client = new S3Client({
    region: settings.region === '' ? 'us-east-1' : settings.region,
    ...(settings.endpoint === '' ? {} : { endpoint: settings.endpoint }),
    forcePathStyle: settings.path_style,
    ...(settings.access_key_id === ''
      ? {}
      : {
          credentials: { accessKeyId: settings.access_key_id, secretAccessKey: settings.secret_access_key },
        }),
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 3,
    requestHandler: { connectionTimeout: Math.min(timeoutMs, 5_000), requestTimeout: timeoutMs },
  });
  const objectKey = (key: string): string => {
    checkArchiveKey(key);
    return prefix + key;
  };
  const where = (key?: string) => `s3://${bucket}/${key ?? prefix}`;

  async function send<T>(
    operation: string,
    target: string,
    run: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      return await run(signal);
    } catch (error) {
      const timedOut = signal.aborted || isTimeout(error);
      throw clearError(error, operation, target, timedOut ? timeoutMs : undefined);
    }
  }

  return {
    async put(key, bytes) {
      const Key = objectKey(key);
      await send('put', where(Key), (abortSignal) =>
        client.send(
          new PutObjectCommand({
            Bucket: bucket,
            Key,
            Body: bytes,
            ContentLength: bytes.length,
            ContentType: options.contentType ?? 'application/gzip',
            ...(lock === undefined
              ? {}
              : {
                  ObjectLockMode: lock.mode,
                  ObjectLockRetainUntilDate: new Date((lock.now?.() ?? new Date()).getTime() + lock.days * 86_400_000),
                  ChecksumAlgorithm: 'SHA256' as const,
                }),
          }),
          { abortSignal },
        ),
      );
    },
    async get(key) {
      const Key = objectKey(key);
      return send('get', where(Key), async (abortSignal) => {
        try {
          const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key }), { abortSignal });
          if (answer.Body === undefined) return new Uint8Array();
          return await answer.Body.transformToByteArray();
        } catch (error) {
          if (isNotFound(error)) return null;
          throw error;
        }
      });
    },
    async delete(key) {
      const Key = objectKey(key);
      await send('delete', where(Key), async (abortSignal) => {
        try {
          await client.send(new DeleteObjectCommand({ Bucket: bucket, Key }), { abortSignal });
        } catch (error) {
          if (!isNotFound(error)) throw error;
        }
      });
    },
    async health() {
      try {
        await send('check', where(), (abortSignal) =>
          client.send(new HeadBucketCommand({ Bucket: bucket }), { abortSignal }),
        );
        return { status: 'ok' };
      } catch (error) {
        return { status: 'down', detail: (error as Error).message };
      }
    },
    async close() {
      client.destroy();
    },
  };
}

function normalizePrefix(prefix: string): string {
  const trimmed = prefix.replace(/^\/+/, '');
  return trimmed === '' || trimmed.endsWith('/') ? trimmed : `${trimmed}/`;
}

/** The SDK's socket timeout (requestTimeout, connectionTimeout) rather than our abort signal. */
function isTimeout(error: unknown): boolean {
  const { name, code } = error as { name?: string; code?: string };
  return name === 'TimeoutError' || code === 'ETIMEDOUT' || code === 'ECONNABORTED';
}

function isNotFound(error: unknown): boolean {
  if (error instanceof NoSuchKey) return true;
  if (!(error instanceof S3ServiceException)) return false;
  return error.name === 'NoSuchKey' || error.name === 'NotFound' || error.$metadata.httpStatusCode === 404;
}

/** One clear error: what failed, where, and why, with a hint for credentials; no secret. */
function clearError(
  error: unknown,
  operation: string,
  target: string,
  timedOutAfter: number | undefined,
): Error {
  const head = `S3 ${operation} of ${target} failed`;
  if (timedOutAfter !== undefined)
    return new Error(`${head}: no answer within ${timedOutAfter} ms (is [registry.s3] endpoint reachable?)`, {
      cause: error,
    });
  if (error instanceof S3ServiceException) {
    const status = error.$metadata.httpStatusCode;
    const code = error.name;
    const hint =
      CREDENTIAL_CODES.has(code) || status === 403
        ? ' (check [registry.s3] access_key_id and secret_access_key, and that the key may use the bucket)'
        : code === 'NoSuchBucket'
          ? ' (check [registry.s3] bucket, endpoint and region)'
          : '';
    const message = error.message && error.message !== 'UnknownError' ? `: ${error.message}` : '';
    return new Error(`${head}: ${code}${status === undefined ? '' : ` (HTTP ${status})`}${message}${hint}`, {
      cause: error,
    });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new Error(`${head}: ${message}`, { cause: error });
}
