/**
 * Routing of primary-key records to buckets. Fixed-bucket tables (`bucket` = N) hash the bucket
 * key (default: the trimmed primary key) as Java does; dynamic-bucket tables (`bucket` = -1) need
 * an assigner that knows which bucket already holds a key (HASH index files).
 */
import { encodeBinaryRow, murmurHash, type DataType, type Value } from '@tidemark/format';
import type { CommitMessage } from '../../commit-message.js';

/** Chooses the bucket of a record. */
export interface BucketAssigner {
  /**
   * The bucket of a record of `partition` (serialized BinaryRow, as in manifests) whose key row
   * hashes to `keyHash` ({@link keyHashOf}: of the bucket key for fixed buckets, of the trimmed
   * primary key for dynamic buckets).
   */
  assign(partition: Uint8Array, keyHash: number): number | Promise<number>;
  /**
   * Called once by the writer's `prepareCommit` with its messages; may add to them (dynamic
   * buckets: the HASH index files of the buckets it assigned).
   */
  prepareCommit?(messages: readonly CommitMessage[]): Promise<CommitMessage[]>;
  /** File-name prefixes of the files the assigner writes (for the writer's in-flight record). */
  inflightPrefixes?(): string[];
  /** Deletes the files the assigner wrote (the writer is aborted or its commit was refused). */
  abort?(): Promise<void>;
}

/** Paimon's hash of a key row (MurmurHash3 of its BinaryRow, seed 42). */
export function keyHashOf(types: readonly DataType[], values: readonly Value[]): number {
  return murmurHash(encodeBinaryRow(types, values));
}

/** `bucket` = N: `abs(hash % N)` with Java's remainder, exactly where Java puts a key. */
export class FixedBucketAssigner implements BucketAssigner {
  constructor(readonly numBuckets: number) {
    if (!Number.isInteger(numBuckets) || numBuckets <= 0) throw new RangeError(`a fixed bucket count must be positive, got ${numBuckets}`);
  }

  assign(_partition: Uint8Array, keyHash: number): number {
    return Math.abs(keyHash % this.numBuckets);
  }
}
