/**
 * The one storage interface every tidemark package reads and writes through.
 *
 * Locations are full URIs or plain paths, never relative to an implicit root:
 * `/data/wh/db.db/t/snapshot/snapshot-1`, `file:///data/...`, `s3://bucket/key`,
 * `memory://name/key`. Use {@link joinPath} to build child locations.
 */
export interface FileStatus {
  /** Full location of the object, in the same form the FileIO was asked about. */
  readonly path: string;
  /** Size in bytes. */
  readonly size: number;
  /** Last modification time (S3: LastModified; local: mtime). */
  readonly lastModified: Date;
}

/** Result of {@link FileIO.createIfAbsent}: exactly one concurrent creator sees `'created'`. */
export type CreateResult = 'created' | 'already-exists';

/** Options of {@link FileIO.list}. */
export interface ListOptions {
  /** Descend into sub-directories (default true). With false, only direct children files are listed. */
  readonly recursive?: boolean;
}

/** One storage backend (local disk, memory, S3). Paths are absolute locations (`/x`, `file://`, `s3://bucket/key`, `memory://`). */
export interface FileIO {
  /** Short name of the backend: `local`, `memory` or `s3`. */
  readonly kind: string;

  /** Reads a whole object. Throws {@link NotFoundError} when it does not exist. */
  read(path: string): Promise<Uint8Array>;

  /**
   * Reads `length` bytes starting at `offset`. A range that starts inside the object but runs
   * past its end is cut at the end; a range that starts at or past the end of a non-empty
   * request throws {@link InvalidRangeError}.
   */
  readRange(path: string, offset: number, length: number): Promise<Uint8Array>;

  /** Size and modification time. Throws {@link NotFoundError} when missing. */
  stat(path: string): Promise<FileStatus>;

  exists(path: string): Promise<boolean>;

  /** Writes (or overwrites) an object. Readers never see a partially written object. */
  write(path: string, data: Uint8Array | string): Promise<void>;

  /**
   * Atomically creates an object only if nothing exists at `path`. Of any number of concurrent
   * creators exactly one gets `'created'`, the others `'already-exists'`, and the stored bytes
   * are the winner's.
   */
  createIfAbsent(path: string, data: Uint8Array | string): Promise<CreateResult>;

  /** Deletes an object; deleting a missing object is not an error. */
  delete(path: string): Promise<void>;

  /**
   * Deletes many objects in batches (S3: 1,000 keys per request). Accepts a stream of paths so
   * callers never need to hold a whole listing. Returns the number of paths processed.
   */
  deleteMany(paths: Iterable<string> | AsyncIterable<string>): Promise<number>;

  /**
   * Lists the files under a directory as a paged async stream (never a whole listing in memory).
   * A missing directory lists as empty.
   */
  list(dir: string, options?: ListOptions): AsyncIterable<FileStatus>;

  /** Releases clients and sockets. */
  close(): Promise<void>;

  /**
   * Stores whose `createIfAbsent` relies on the server honouring a precondition (S3's
   * `If-None-Match: *`) implement this: it checks, once per prefix and process, that the server
   * really refuses the second create, and throws `ConditionalWriteNotSupportedError` otherwise.
   * Committers call it before their first commit under a table. Local disk and memory need no check.
   */
  verifyConditionalWrites?(prefix: string): Promise<void>;
}
