/**
 * Which bucket modes of primary-key tables tidemark writes, checked before anything is written.
 */
import type { TableSchema } from '@tidemark/format';
import { OPTION, tableOptions } from '../core-options.js';
import { NotSupportedError } from './write-errors.js';

/** Bucket mode of a primary-key table, as Java's `BucketMode` names it. */
export type PrimaryKeyBucketMode = 'HASH_FIXED' | 'HASH_DYNAMIC';

/**
 * The bucket mode a primary-key table is written in.
 *
 * @throws NotSupportedError for postpone buckets (`bucket` = -2), for cross-partition updates
 *   (a primary key without every partition key, which Java writes through a global index) and for
 *   `bucket-key` with `bucket` = -1 (Java refuses that table too).
 */
export function primaryKeyBucketMode(schema: Pick<TableSchema, 'options' | 'primaryKeys' | 'partitionKeys'>): PrimaryKeyBucketMode {
  const options = tableOptions(schema);
  if (options.bucket === -2) {
    throw new NotSupportedError(
      "writing primary-key tables with 'bucket' = -2 (postpone buckets) is not supported; " +
        "use 'bucket' = -1 (dynamic buckets) or a fixed bucket count",
    );
  }
  const missing = schema.partitionKeys.filter((k) => !schema.primaryKeys.includes(k));
  if (missing.length > 0) {
    throw new NotSupportedError(
      `primary key (${schema.primaryKeys.join(', ')}) does not contain partition key(s) ${missing.join(', ')}: ` +
        'cross-partition updates are not supported; add the partition keys to the primary key',
    );
  }
  if (options.bucket > 0) return 'HASH_FIXED';
  if (options.bucketKey.length > 0) {
    throw new NotSupportedError(
      `table option '${OPTION.BUCKET_KEY}' = '${options.bucketKey.join(',')}' cannot be used with ` +
        `'${OPTION.BUCKET}' = -1 (dynamic buckets); ` +
        "remove 'bucket-key' or set a fixed bucket count",
    );
  }
  return 'HASH_DYNAMIC';
}
