import { describe, expect, it } from 'vitest';
import {
  CommitConflictError,
  CommitRetryExhaustedError,
  CorruptTableError,
  InvalidOptionError,
  SnapshotNotFoundError,
  TableNotFoundError,
} from '@tidemark/core';
import { CorruptFileError, SchemaError } from '@tidemark/format';
import { ConditionalWriteNotSupportedError, NotFoundError, StorageConfigError, StorageError } from '@tidemark/storage';
import { MissingDataFileError } from '@tidemark/sink';
import { isUserError } from '../src/errors.js';

describe('isUserError: each error class carries its own flag', () => {
  it('reports input, configuration, damaged files and refused commits as user errors', () => {
    for (const err of [
      new SnapshotNotFoundError(7, 3, 9),
      new TableNotFoundError('/wh/db.db/t'),
      new InvalidOptionError('bucket', 'x', 'an integer'),
      new CommitConflictError('files were deleted concurrently'),
      new SchemaError("unknown type 'INTEGRAL'"),
      new NotFoundError('s3://b/k'),
      new ConditionalWriteNotSupportedError('s3://b/t', 'second PUT accepted'),
      new StorageConfigError('no region'),
      new MissingDataFileError('gone', ['s3://b/t/bucket-0/f']),
      new CorruptFileError('s3://b/t/bucket-0/f.parquet', 'the Parquet decoder crashed on this file'),
      new CorruptTableError('refusing to commit on top of snapshot 3: a manifest cannot be read', { userError: true }),
    ]) {
      expect(isUserError(err), err.constructor.name).toBe(true);
    }
  });

  it('reports corrupt table metadata, exhausted retries and connection failures as unexpected', () => {
    const hangUp = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    for (const err of [
      new CorruptTableError('snapshot 3 names a missing manifest'),
      new CommitRetryExhaustedError('gave up after 11 attempts'),
      new StorageError('S3 GET of s3://b/k failed: socket hang up', { cause: hangUp }),
      hangUp,
      new TypeError('x is undefined'),
    ]) {
      expect(isUserError(err), err.message).toBe(false);
    }
  });
});
