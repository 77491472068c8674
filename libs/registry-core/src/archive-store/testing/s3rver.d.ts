/** The part of s3rver (an S3-compatible server for tests, on npm without types) the tests use. */
declare module 's3rver' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  interface S3rverOptions {
    silent?: boolean;
    directory?: string;
    allowMismatchedSignatures?: boolean;
    vhostBuckets?: boolean;
    configureBuckets?: { name: string }[];
  }

  export default class S3rver {
    constructor(options: S3rverOptions);
    /** Makes the buckets of `configureBuckets`. */
    configureBuckets(): Promise<void>;
    /** The request handler, for a server of one's own. */
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
  }
}
