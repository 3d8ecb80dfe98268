/**
 * Typed storage errors. Messages name the path or option involved and never contain credentials.
 */

/**
 * Base class of every error thrown by `@tidemark/storage`. `userError` tells front ends whether the
 * person running the command can fix it (a missing path, a bad setting, a refused credential:
 * print one line) or it is an environment failure or bug (a reset connection, a store that
 * misbehaves: report it as unexpected, with its stack on request).
 */
export class StorageError extends Error {
  readonly userError: boolean;

  constructor(message: string, options?: { cause?: unknown; userError?: boolean }) {
    super(message, options?.cause !== undefined ? { cause: options.cause } : undefined);
    this.name = new.target.name;
    this.userError = options?.userError ?? false;
  }
}

/** The object (or file) at {@link NotFoundError.path} does not exist. */
export class NotFoundError extends StorageError {
  constructor(
    readonly path: string,
    options?: { cause?: unknown },
  ) {
    super(`Not found: ${path}`, { ...options, userError: true });
  }
}

/** A ranged read asked for bytes that do not exist (offset at or past the end, or negative values). */
export class InvalidRangeError extends StorageError {
  constructor(
    readonly path: string,
    readonly offset: number,
    readonly length: number,
    readonly size?: number,
    options?: { cause?: unknown },
  ) {
    super(`Invalid range for ${path}: offset ${offset}, length ${length}` + (size === undefined ? '' : ` (object size ${size})`), options);
  }
}

/**
 * The object store does not honour `If-None-Match: *` on PUT, so atomic create-if-absent (and with it
 * tidemark's lock-free commit) cannot be guaranteed.
 */
export class ConditionalWriteNotSupportedError extends StorageError {
  constructor(
    readonly location: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(
      `The object store behind ${location} does not support conditional writes (PUT with If-None-Match: *): ${detail}. ` +
        'Concurrent commits could silently overwrite each other. Use a store that supports conditional PUTs ' +
        '(AWS S3, Ceph RGW, MinIO), or, if only a single writer ever commits, opt out with the S3 option ' +
        "`conditionalWriteCheck: 'skip'` or the environment variable TIDEMARK_S3_SKIP_CONDITIONAL_CHECK=1.",
      { ...options, userError: true },
    );
  }
}

/** Invalid or incomplete storage configuration (options, core-site.xml, environment). */
export class StorageConfigError extends StorageError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, { ...options, userError: true });
  }
}

/**
 * Some paths of a {@link FileIO.deleteMany} call could not be deleted. All batches were attempted;
 * {@link DeleteManyError.failures} lists every path that failed.
 */
export class DeleteManyError extends StorageError {
  constructor(
    readonly processed: number,
    readonly failures: ReadonlyArray<{ readonly path: string; readonly code: string; readonly message: string }>,
  ) {
    const first = failures
      .slice(0, 3)
      .map((f) => `${f.path} (${f.code}: ${f.message})`)
      .join('; ');
    super(`Failed to delete ${failures.length} of ${processed} paths: ${first}${failures.length > 3 ? '; ...' : ''}`);
  }
}
