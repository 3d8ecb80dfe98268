/**
 * Fixed-bucket assignment, identical to Java Paimon so Java and tidemark writers agree on where a
 * key lives (a mismatch silently duplicates keys across buckets).
 */
import { encodeBinaryRow } from './binary-row.js';
import { FormatError } from './errors.js';
import { murmurHash } from './murmur-hash.js';
import type { DataType } from './types.js';
import type { Value } from './values.js';

/**
 * Bucket of a row given the BinaryRow bytes (no arity prefix) of its bucket-key columns:
 * `abs(hash % numBuckets)` with Java's remainder semantics.
 */
export function bucketOf(bucketKeyRow: Uint8Array, numBuckets: number): number {
  if (!Number.isInteger(numBuckets) || numBuckets <= 0) {
    throw new FormatError(`bucketOf needs a positive bucket count, got ${numBuckets}`);
  }
  return Math.abs(murmurHash(bucketKeyRow) % numBuckets);
}

/** Bucket of a row from its bucket-key values (encodes them as a BinaryRow first). */
export function bucketOfValues(types: readonly DataType[], values: readonly Value[], numBuckets: number): number {
  return bucketOf(encodeBinaryRow(types, values), numBuckets);
}
