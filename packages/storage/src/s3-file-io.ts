import type { CompletedPart, S3Client } from '@aws-sdk/client-s3';
import { createRequire } from 'node:module';
import { createHash } from 'node:crypto';
import { bytesEqual, clampRange, toBytes, validateRangeArgs } from './bytes.js';
import { ensureConditionalWrites } from './conditional-write-probe.js';
import {
  ConditionalWriteNotSupportedError,
  DeleteManyError,
  InvalidRangeError,
  NotFoundError,
  StorageConfigError,
  StorageError,
} from './errors.js';
import type { CreateResult, FileIO, FileStatus, ListOptions } from './file-io.js';
import { parseLocation } from './path.js';
import { S3Config, resolveS3Config, type S3Options } from './s3-config.js';
import { S3ObjectRequests, type ObjectResponse } from './s3-object-requests.js';
import { s3SetupError } from './s3-setup-errors.js';

/**
 * The AWS SDK client, loaded on first use: it adds about 0.06 s of CPU to the 0.76 s a `tidemark`
 * process spends loading its modules, which a command on local disk (or a test worker, or a cron
 * job) should not pay. Its package is CommonJS for Node either way, so a synchronous require gives
 * the same module an import would.
 */
type AwsSdk = typeof import('@aws-sdk/client-s3');
let awsSdk: AwsSdk | undefined;
function sdk(): AwsSdk {
  // The SDK warns on every process under Node 20 that its releases after January 2027 need Node
  // 22: eight lines on stderr of every S3 command, about the SDK's future, not this run. A user
  // who set the variable keeps their choice.
  process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';
  return (awsSdk ??= createRequire(import.meta.url)('@aws-sdk/client-s3') as AwsSdk);
}

/** S3 accepts at most 1,000 keys per DeleteObjects request. */
const DELETE_BATCH = 1000;
/**
 * DeleteObjects requests {@link S3FileIO.deleteMany} keeps in flight: a request of 1,000 keys takes
 * the server a while (each key is a metadata update), so a few in parallel multiply throughput;
 * few enough that one call cannot crowd out a store's other clients.
 */
const DELETE_CONCURRENCY = 4;
/** S3 allows at most 10,000 parts per multipart upload. */
const MAX_PARTS = 10_000;
/** Parts uploaded in parallel by one multipart write. */
const PART_CONCURRENCY = 4;
const MAX_BACKOFF_MS = 20_000;

// ---------------------------------------------------------------------------------------------
// Error classification

interface SdkErrorLike {
  name?: string;
  code?: string;
  Code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
  $retryable?: unknown;
}

function asSdkError(err: unknown): SdkErrorLike {
  return typeof err === 'object' && err !== null ? (err as SdkErrorLike) : {};
}

function httpStatus(err: unknown): number | undefined {
  return asSdkError(err).$metadata?.httpStatusCode;
}

function errorName(err: unknown): string {
  const e = asSdkError(err);
  return e.name ?? e.Code ?? e.code ?? 'Error';
}

function isNotFound(err: unknown): boolean {
  const name = errorName(err);
  return name === 'NoSuchKey' || name === 'NotFound' || (httpStatus(err) === 404 && name !== 'NoSuchBucket' && name !== 'NoSuchUpload');
}

const RETRYABLE_NAMES = new Set([
  'SlowDown',
  // The server's MD5 of an upload differs from our Content-MD5: the body was damaged on the way.
  'BadDigest',
  // Our check of a response body failed (see ResponseIntegrityError).
  'ResponseIntegrityError',
  'InternalError',
  'ServiceUnavailable',
  'RequestTimeout',
  'RequestTimeoutException',
  'Throttling',
  'ThrottlingException',
  'TooManyRequestsException',
  'TimeoutError',
]);
const NETWORK_CODES = new Set([
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ERR_STREAM_PREMATURE_CLOSE',
  'UND_ERR_SOCKET',
]);

/**
 * Throttling, 5xx (except 501 NotImplemented), timeouts and dropped connections are transient.
 * For a non-idempotent request they also mean the outcome is unknown.
 */
export function isRetryableS3Error(err: unknown): boolean {
  const status = httpStatus(err);
  if (status === 501) return false;
  if (status !== undefined && (status >= 500 || status === 429)) return true;
  const e = asSdkError(err);
  if (RETRYABLE_NAMES.has(errorName(err))) return true;
  if (e.code !== undefined && NETWORK_CODES.has(e.code)) return true;
  const cause = (err as { cause?: unknown })?.cause;
  const causeCode = asSdkError(cause).code;
  if (causeCode !== undefined && NETWORK_CODES.has(causeCode)) return true;
  return status === undefined && /socket hang up|ECONNRESET|EPIPE|timed? ?out/i.test(e.message ?? '');
}

/**
 * A response body failed our check (short body, MD5 differs from the ETag): damaged in transit,
 * so the request is retried like a 5xx.
 */
class ResponseIntegrityError extends Error {
  override readonly name = 'ResponseIntegrityError';
}

/**
 * Content-MD5 of a request body. Sent with every upload: the server refuses a body damaged on the
 * way (BadDigest) instead of storing it. Ceph RGW 16 ignores `x-amz-checksum-crc32` (a wrong value
 * is accepted), so the SDK's flexible checksums would protect nothing there.
 */
function md5Base64(bytes: Uint8Array): string {
  return createHash('md5').update(bytes).digest('base64');
}

function describeSdkError(err: unknown): string {
  const status = httpStatus(err);
  const e = asSdkError(err);
  return `${errorName(err)}${status === undefined ? '' : ` (HTTP ${status})`}: ${e.message ?? String(err)}`;
}

// ---------------------------------------------------------------------------------------------
// Shared clients: one S3Client per distinct configuration, reference counted.

interface PooledClient {
  readonly client: S3Client;
  /** Single-object requests without the SDK's per-request cost (endpoints set explicitly), else null. */
  readonly objects: S3ObjectRequests | null;
  refs: number;
}
const clientPool = new Map<string, PooledClient>();

function createClient(config: S3Config): S3Client {
  const agent = { keepAlive: true, maxSockets: 64 };
  return new (sdk().S3Client)({
    region: config.region,
    ...(config.endpoint === undefined ? {} : { endpoint: config.endpoint }),
    forcePathStyle: config.forcePathStyle,
    ...(config.credentials === undefined ? {} : { credentials: config.credentials }),
    // Retries are ours: an ambiguous conditional PUT must be resolved by read-back, never retried blindly.
    maxAttempts: 1,
    // The default (WHEN_SUPPORTED) sends aws-chunked bodies that Ceph RGW rejects with 411.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: {
      ...(config.requestTimeoutMs === undefined
        ? {}
        : { requestTimeout: config.requestTimeoutMs, connectionTimeout: config.requestTimeoutMs, throwOnRequestTimeout: true }),
      httpAgent: agent,
      httpsAgent: agent,
    },
  });
}

/**
 * The direct path for single-object requests, for a path-style endpoint named in the settings (S3
 * look-alikes such as Ceph RGW or MinIO: where a commit's requests share the machine's CPU with the
 * store). AWS itself (no endpoint, virtual-hosted buckets, regional redirects) stays on the SDK.
 */
function createObjectRequests(config: S3Config, client: S3Client): S3ObjectRequests | null {
  if (config.endpoint === undefined || !config.forcePathStyle) return null;
  return new S3ObjectRequests(config.endpoint, config.region, client.config.credentials, config.requestTimeoutMs);
}

function acquireClient(config: S3Config): { client: S3Client; objects: S3ObjectRequests | null; release: () => void } {
  const key = config.fingerprint();
  let pooled = clientPool.get(key);
  if (!pooled) {
    const client = createClient(config);
    pooled = { client, objects: createObjectRequests(config, client), refs: 0 };
    clientPool.set(key, pooled);
  }
  pooled.refs++;
  const entry = pooled;
  let released = false;
  return {
    client: entry.client,
    objects: entry.objects,
    release: () => {
      if (released) return;
      released = true;
      entry.refs--;
      if (entry.refs === 0) {
        clientPool.delete(key);
        entry.client.destroy();
        entry.objects?.destroy();
      }
    },
  };
}

/** Number of live pooled S3 clients (for tests and diagnostics). */
export function s3ClientPoolSize(): number {
  return clientPool.size;
}

// ---------------------------------------------------------------------------------------------

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * FileIO over S3-compatible object stores (`s3://bucket/key`), built on `@aws-sdk/client-s3`.
 * With an explicit path-style endpoint (Ceph RGW, MinIO, ...), GET / HEAD / PUT / DELETE of one key
 * and listings bypass `S3Client.send` (same signer and credentials, a fifth of its CPU per request:
 * s3-object-requests.ts); AWS itself, batch deletes and multipart uploads go through the SDK.
 *
 * - Idempotent requests (GET, HEAD, LIST, plain PUT, DELETE, multipart parts) are retried with
 *   jittered exponential backoff on throttling, 5xx and network errors, up to `maxAttempts`.
 * - {@link S3FileIO.createIfAbsent} is a single PutObject with `If-None-Match: *` (412/409 mean the
 *   key exists). A 5xx, reset or timeout leaves the outcome unknown; it is resolved by reading the
 *   object back and comparing bytes, never by a blind retry.
 * - {@link S3FileIO.write} uses multipart uploads at and above `multipartThreshold`.
 */
export class S3FileIO implements FileIO {
  readonly kind = 's3';
  readonly config: S3Config;
  private readonly client: S3Client;
  /** GET / HEAD / PUT / DELETE of one key and LIST without the SDK (see s3-object-requests.ts); null: through the SDK. */
  private readonly objects: S3ObjectRequests | null;
  private readonly releaseClient: () => void;
  private closed = false;

  /**
   * @param options raw options (resolved with {@link resolveS3Config}) or an already resolved config.
   * @param deps.client use this client instead of a pooled one (it is not destroyed on close).
   */
  constructor(options: S3Options | S3Config = {}, deps: { client?: S3Client } = {}) {
    this.config = options instanceof S3Config ? options : resolveS3Config(options);
    if (deps.client) {
      // An injected client sees every request (its middleware may be what the caller relies on).
      this.client = deps.client;
      this.objects = null;
      this.releaseClient = () => {};
    } else {
      const { client, objects, release } = acquireClient(this.config);
      this.client = client;
      this.objects = objects;
      this.releaseClient = release;
    }
  }

  /** Identifies the endpoint (for per-endpoint caches such as the conditional-write probe). */
  get endpointId(): string {
    return this.config.endpointId;
  }

  get conditionalWriteCheck(): 'probe' | 'skip' {
    return this.config.conditionalWriteCheck;
  }

  /**
   * Verifies once per endpoint/bucket/prefix that the store refuses a second `If-None-Match: *`
   * PUT; call before the first commit under `prefix`. See {@link ensureConditionalWrites}.
   */
  verifyConditionalWrites(prefix: string): Promise<void> {
    return ensureConditionalWrites(this, prefix);
  }

  private locate(path: string, needKey = true): { bucket: string; key: string } {
    if (this.closed) throw new StorageError(`S3FileIO is closed (while accessing ${path})`);
    const loc = parseLocation(path);
    if (loc.scheme !== 's3') throw new StorageConfigError(`S3FileIO only handles s3://bucket/key locations, got ${path}`);
    if (needKey && loc.key === '') throw new StorageConfigError(`Location ${path} names a bucket but no object key`);
    return { bucket: loc.bucket!, key: loc.key! };
  }

  private backoff(attempt: number): number {
    const cap = Math.min(MAX_BACKOFF_MS, this.config.retryBaseDelayMs * 2 ** (attempt - 1));
    return Math.random() * cap;
  }

  private mapError(err: unknown, path: string, op: string): Error {
    if (err instanceof StorageError) return err;
    if (isNotFound(err)) return new NotFoundError(path, { cause: err });
    const setup = s3SetupError(err, this.config);
    if (setup !== undefined) return setup;
    // A refusal the user can act on (credentials, permissions, bucket name) vs. a network or server failure.
    const status = httpStatus(err);
    const userError = status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429;
    return new StorageError(`S3 ${op} of ${path} failed: ${describeSdkError(err)}`, { cause: err, userError });
  }

  /** Runs an idempotent request with retries; errors come back mapped to storage errors. */
  private async retry<T>(op: string, path: string, fn: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        if (attempt >= this.config.maxAttempts || !isRetryableS3Error(err)) throw this.mapError(err, path, op);
        await sleep(this.backoff(attempt));
      }
    }
  }

  /** One GET (optionally ranged), through the direct path when there is one. */
  private async getObject(
    bucket: string,
    key: string,
    range?: string,
  ): Promise<{ status: number | undefined; body: Uint8Array; contentLength?: number; contentRange?: string; etag?: string }> {
    if (this.objects !== null) {
      const r: ObjectResponse = await this.objects.send('GET', bucket, key, range === undefined ? {} : { range });
      const length = r.headers['content-length'];
      return {
        status: r.status,
        body: r.body,
        ...(length === undefined ? {} : { contentLength: Number(length) }),
        ...(r.headers['content-range'] === undefined ? {} : { contentRange: r.headers['content-range'] }),
        ...(r.headers.etag === undefined ? {} : { etag: r.headers.etag }),
      };
    }
    const resp = await this.client.send(
      new (sdk().GetObjectCommand)({ Bucket: bucket, Key: key, ...(range === undefined ? {} : { Range: range }) }),
    );
    const body = resp.Body ? await resp.Body.transformToByteArray() : new Uint8Array(0);
    return {
      status: resp.$metadata.httpStatusCode,
      body,
      ...(resp.ContentLength === undefined ? {} : { contentLength: resp.ContentLength }),
      ...(resp.ContentRange === undefined ? {} : { contentRange: resp.ContentRange }),
      ...(resp.ETag === undefined ? {} : { etag: resp.ETag }),
    };
  }

  /** One PUT with Content-MD5 (`ifAbsent`: `If-None-Match: *`), through the direct path when there is one. */
  private async putObject(bucket: string, key: string, bytes: Uint8Array, ifAbsent: boolean): Promise<void> {
    const md5 = md5Base64(bytes);
    if (this.objects !== null) {
      const headers: Record<string, string> = { 'content-md5': md5, 'content-type': 'application/octet-stream' };
      if (ifAbsent) headers['if-none-match'] = '*';
      await this.objects.send('PUT', bucket, key, headers, bytes);
      return;
    }
    await this.client.send(
      new (sdk().PutObjectCommand)({ Bucket: bucket, Key: key, Body: bytes, ContentMD5: md5, ...(ifAbsent ? { IfNoneMatch: '*' } : {}) }),
    );
  }

  async read(path: string): Promise<Uint8Array> {
    const { bucket, key } = this.locate(path);
    return this.retry('GET', path, async () => {
      const resp = await this.getObject(bucket, key);
      const body = resp.body;
      if (resp.contentLength !== undefined && body.length !== resp.contentLength) {
        throw new ResponseIntegrityError(`GET ${path}: received ${body.length} of ${resp.contentLength} bytes`);
      }
      // A single-part upload's ETag is the MD5 of its bytes (RGW does not return x-amz-checksum-*).
      const etag = /^"?([0-9a-f]{32})"?$/.exec(resp.etag ?? '')?.[1];
      if (etag !== undefined && createHash('md5').update(body).digest('hex') !== etag) {
        throw new ResponseIntegrityError(`GET ${path}: the body does not match the object's MD5 (ETag ${etag})`);
      }
      return body;
    });
  }

  /** Reads the object or returns undefined when it does not exist. */
  private async readIfExists(path: string): Promise<Uint8Array | undefined> {
    try {
      return await this.read(path);
    } catch (err) {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    }
  }

  async readRange(path: string, offset: number, length: number): Promise<Uint8Array> {
    validateRangeArgs(path, offset, length);
    if (length === 0) {
      await this.stat(path); // still report a missing object
      return new Uint8Array(0);
    }
    const { bucket, key } = this.locate(path);
    return this.retry('ranged GET', path, async () => {
      let resp;
      try {
        resp = await this.getObject(bucket, key, `bytes=${offset}-${offset + length - 1}`);
      } catch (err) {
        if (httpStatus(err) === 416 || errorName(err) === 'InvalidRange') {
          throw new InvalidRangeError(path, offset, length, undefined, { cause: err });
        }
        throw err;
      }
      const body = resp.body;
      if (resp.status === 200 && resp.contentRange === undefined) {
        // The server ignored Range and sent the whole object: apply the range ourselves.
        const end = clampRange(path, offset, length, body.length);
        return body.slice(offset, end);
      }
      const range = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(resp.contentRange ?? '');
      if (range && body.length !== Number(range[2]) - Number(range[1]) + 1) {
        throw new ResponseIntegrityError(`ranged GET ${path}: received ${body.length} bytes for ${resp.contentRange}`);
      }
      return body.length > length ? body.subarray(0, length) : body;
    });
  }

  async stat(path: string): Promise<FileStatus> {
    const { bucket, key } = this.locate(path);
    if (this.objects !== null) {
      const objects = this.objects;
      const resp = await this.retry('HEAD', path, () => objects.send('HEAD', bucket, key));
      const modified = resp.headers['last-modified'];
      return { path, size: Number(resp.headers['content-length'] ?? 0), lastModified: modified ? new Date(modified) : new Date(0) };
    }
    const resp = await this.retry('HEAD', path, () => this.client.send(new (sdk().HeadObjectCommand)({ Bucket: bucket, Key: key })));
    return { path, size: resp.ContentLength ?? 0, lastModified: resp.LastModified ?? new Date(0) };
  }

  async exists(path: string): Promise<boolean> {
    try {
      await this.stat(path);
      return true;
    } catch (err) {
      if (err instanceof NotFoundError) return false;
      throw err;
    }
  }

  async write(path: string, data: Uint8Array | string): Promise<void> {
    const { bucket, key } = this.locate(path);
    const bytes = toBytes(data);
    if (bytes.length >= this.config.multipartThreshold) {
      await this.multipartWrite(path, bucket, key, bytes);
      return;
    }
    await this.retry('PUT', path, () => this.putObject(bucket, key, bytes, false));
  }

  private async multipartWrite(path: string, bucket: string, key: string, bytes: Uint8Array): Promise<void> {
    const created = await this.retry('CreateMultipartUpload', path, () =>
      this.client.send(new (sdk().CreateMultipartUploadCommand)({ Bucket: bucket, Key: key })),
    );
    const uploadId = created.UploadId;
    if (!uploadId) throw new StorageError(`S3 CreateMultipartUpload of ${path} returned no UploadId`);
    const partSize = Math.max(this.config.partSize, Math.ceil(bytes.length / MAX_PARTS));
    const partCount = Math.max(1, Math.ceil(bytes.length / partSize));
    try {
      const parts: CompletedPart[] = new Array(partCount);
      let next = 0;
      const worker = async () => {
        while (next < partCount) {
          const index = next++;
          const body = bytes.subarray(index * partSize, Math.min(bytes.length, (index + 1) * partSize));
          const resp = await this.retry('UploadPart', path, () =>
            this.client.send(
              new (sdk().UploadPartCommand)({
                Bucket: bucket,
                Key: key,
                UploadId: uploadId,
                PartNumber: index + 1,
                Body: body,
                ContentMD5: md5Base64(body),
              }),
            ),
          );
          if (!resp.ETag) throw new StorageError(`S3 UploadPart ${index + 1} of ${path} returned no ETag`);
          parts[index] = { ETag: resp.ETag, PartNumber: index + 1 };
        }
      };
      await Promise.all(Array.from({ length: Math.min(PART_CONCURRENCY, partCount) }, worker));
      let attempted = false;
      await this.retry('CompleteMultipartUpload', path, async () => {
        try {
          await this.client.send(
            new (sdk().CompleteMultipartUploadCommand)({ Bucket: bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: parts } }),
          );
        } catch (err) {
          // A retried Complete whose first attempt succeeded finds the upload gone: check the object.
          if (attempted && errorName(err) === 'NoSuchUpload') {
            const st = await this.stat(path).catch(() => undefined);
            if (st?.size === bytes.length) return;
          }
          attempted = true;
          throw err;
        }
      });
    } catch (err) {
      await this.retry('AbortMultipartUpload', path, () =>
        this.client.send(new (sdk().AbortMultipartUploadCommand)({ Bucket: bucket, Key: key, UploadId: uploadId })),
      ).catch(() => {}); // the original error matters more; a lifecycle rule can clean up leftovers
      throw err;
    }
  }

  async createIfAbsent(path: string, data: Uint8Array | string): Promise<CreateResult> {
    const { bucket, key } = this.locate(path);
    const bytes = toBytes(data);
    // True once a PUT of ours may have been applied without us seeing the reply.
    let ambiguous = false;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.putObject(bucket, key, bytes, true);
        return 'created';
      } catch (err) {
        const status = httpStatus(err);
        const name = errorName(err);
        if (status === 412 || name === 'PreconditionFailed') {
          if (!ambiguous) return 'already-exists';
          // The object that blocks us may be our own earlier, unacknowledged PUT.
          const current = await this.readIfExists(path);
          if (current !== undefined) return bytesEqual(current, bytes) ? 'created' : 'already-exists';
        } else if (status === 409 || name === 'ConditionalRequestConflict') {
          // Another conditional write to the key was in flight; it may still fail, so look.
          const current = await this.readIfExists(path);
          if (current !== undefined) return ambiguous && bytesEqual(current, bytes) ? 'created' : 'already-exists';
        } else if (status === 501 || name === 'NotImplemented') {
          throw new ConditionalWriteNotSupportedError(path, 'the server answered 501 NotImplemented to If-None-Match: *', {
            cause: err,
          });
        } else if (isRetryableS3Error(err)) {
          ambiguous = true;
          const current = await this.readIfExists(path);
          if (current !== undefined) return bytesEqual(current, bytes) ? 'created' : 'already-exists';
          // Nothing there: our PUT was not applied (yet); try again.
        } else {
          throw this.mapError(err, path, 'conditional PUT');
        }
        if (attempt >= this.config.maxAttempts) {
          throw new StorageError(
            `S3 conditional PUT of ${path} did not complete after ${attempt} attempts; last error: ${describeSdkError(err)}`,
            { cause: err },
          );
        }
        await sleep(this.backoff(attempt));
      }
    }
  }

  async delete(path: string): Promise<void> {
    const { bucket, key } = this.locate(path);
    try {
      const objects = this.objects;
      await this.retry('DELETE', path, async () => {
        if (objects !== null) await objects.send('DELETE', bucket, key);
        else await this.client.send(new (sdk().DeleteObjectCommand)({ Bucket: bucket, Key: key }));
      });
    } catch (err) {
      if (err instanceof NotFoundError) return;
      throw err;
    }
  }

  /**
   * Batches of up to 1,000 keys per DeleteObjects request, {@link DELETE_CONCURRENCY} requests in
   * flight: the input stream is read only as far as a free request slot allows, so memory stays at
   * a few batches whatever the input's length. Requests complete in any order, and so do the keys
   * of one request: callers that need an order must wait for one call before the next.
   */
  async deleteMany(paths: Iterable<string> | AsyncIterable<string>): Promise<number> {
    const batches = new Map<string, Map<string, string>>(); // bucket -> key -> path
    const failures: { path: string; code: string; message: string }[] = [];
    const inFlight = new Set<Promise<void>>();
    let error: unknown = null;
    const send = async (bucket: string, batch: Map<string, string>): Promise<void> => {
      while (inFlight.size >= DELETE_CONCURRENCY) await Promise.race(inFlight);
      if (error !== null) return;
      const p: Promise<void> = this.deleteBatch(bucket, batch, failures)
        .catch((e: unknown) => {
          error ??= e;
        })
        .finally(() => inFlight.delete(p));
      inFlight.add(p);
    };
    let processed = 0;
    try {
      for await (const path of paths) {
        if (error !== null) break;
        const { bucket, key } = this.locate(path);
        let batch = batches.get(bucket);
        if (!batch) {
          batch = new Map();
          batches.set(bucket, batch);
        }
        batch.set(key, path);
        processed++;
        if (batch.size >= DELETE_BATCH) {
          batches.delete(bucket);
          await send(bucket, batch);
        }
      }
      if (error === null) for (const [bucket, batch] of batches) await send(bucket, batch);
    } finally {
      // Nothing keeps running after the call returns or throws (also when the input stream throws).
      await Promise.all(inFlight);
    }
    if (error !== null) throw error;
    if (failures.length > 0) throw new DeleteManyError(processed, failures);
    return processed;
  }

  private async deleteBatch(
    bucket: string,
    batch: Map<string, string>,
    failures: { path: string; code: string; message: string }[],
  ): Promise<void> {
    let pending = [...batch.keys()];
    for (let attempt = 1; pending.length > 0; attempt++) {
      const resp = await this.retry('DeleteObjects', `s3://${bucket}/ (${pending.length} keys)`, () =>
        this.client.send(
          new (sdk().DeleteObjectsCommand)({ Bucket: bucket, Delete: { Objects: pending.map((Key) => ({ Key })), Quiet: true } }),
        ),
      );
      const retryable: string[] = [];
      for (const e of resp.Errors ?? []) {
        if (e.Key === undefined) continue;
        const code = e.Code ?? 'Error';
        if (code === 'NoSuchKey') continue;
        if (attempt < this.config.maxAttempts && RETRYABLE_NAMES.has(code)) retryable.push(e.Key);
        else failures.push({ path: batch.get(e.Key) ?? `s3://${bucket}/${e.Key}`, code, message: e.Message ?? '' });
      }
      pending = retryable;
      if (pending.length > 0) await sleep(this.backoff(attempt));
    }
  }

  async *list(dir: string, options?: ListOptions): AsyncIterable<FileStatus> {
    const recursive = options?.recursive ?? true;
    const { bucket, key } = this.locate(dir, false);
    const prefix = key === '' || key.endsWith('/') ? key : `${key}/`;
    // Children keep the caller's form of `dir`; keys are appended verbatim (S3 keys may contain '//').
    const base = dir.endsWith('/') ? dir : `${dir}/`;
    let token: string | undefined;
    const objects = this.objects;
    if (objects !== null) {
      do {
        const page = await this.retry('LIST', dir, () => objects.listPage(bucket, prefix, recursive ? undefined : '/', token));
        for (const obj of page.contents) {
          if (obj.key.endsWith('/')) continue; // "directory" marker objects
          yield { path: base + obj.key.slice(prefix.length), size: obj.size, lastModified: obj.lastModified };
        }
        token = page.truncated ? page.nextToken : undefined;
      } while (token !== undefined);
      return;
    }
    do {
      const resp = await this.retry('LIST', dir, () =>
        this.client.send(
          new (sdk().ListObjectsV2Command)({
            Bucket: bucket,
            Prefix: prefix,
            ...(recursive ? {} : { Delimiter: '/' }),
            ...(token === undefined ? {} : { ContinuationToken: token }),
          }),
        ),
      );
      for (const obj of resp.Contents ?? []) {
        if (obj.Key === undefined || obj.Key.endsWith('/')) continue; // "directory" marker objects
        yield {
          path: base + obj.Key.slice(prefix.length),
          size: obj.Size ?? 0,
          lastModified: obj.LastModified ?? new Date(0),
        };
      }
      token = resp.IsTruncated ? resp.NextContinuationToken : undefined;
    } while (token !== undefined);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.releaseClient();
  }
}
