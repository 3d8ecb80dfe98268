/**
 * Which of the P writers of a pipeline takes a record. Records of a primary-key table go by
 * bucket: every record of one (partition, bucket) reaches the same writer, in source order, so the
 * updates of a key keep their order within a checkpoint and no two writers of one commit share a
 * bucket (each writer may then compact its buckets). Append tables are spread round-robin (order
 * does not matter there).
 *
 * Dynamic-bucket tables (`bucket` = -1) learn a key's bucket from the pipeline's one
 * {@link BucketAssigner} before routing, as Java Paimon's sink runs its hash bucket assigner ahead
 * of the shuffle to the writers. The writers ask the same assigner again and get the bucket the
 * router was given: the assigner answers a known key hash from its index.
 */
import { keyHashOf, toInternal, tableOptions, type BucketAssigner, type RowObject } from '@tidemark/core';
import {
  bucketOfValues,
  murmurHash,
  serializeBinaryRow,
  trimmedPrimaryKeys,
  type DataType,
  type TableSchema,
  type Value,
} from '@tidemark/format';
import { SinkUsageError, WriterRoutingError } from './errors.js';

const INT: DataType = { root: 'INT', nullable: false } as DataType;

/** Writer index of a record: a number, or a promise while the assigner loads a partition's index. */
export type RecordRoute = (record: RowObject) => number | Promise<number>;

/**
 * Writer (0 … parallelism-1) of the dynamic bucket `bucket` of `partition` (manifest form, as the
 * assigner takes it). A partition's buckets go to consecutive writers from a start the partition
 * hashes to, as Java's channel computer spreads them: a partition with B buckets keeps min(B, P)
 * writers busy, where hashing each (partition, bucket) would often leave some writers idle.
 */
export function writerOfBucket(partition: Uint8Array, bucket: number, parallelism: number): number {
  const start = Math.abs(murmurHash(partition.subarray(4)) % parallelism);
  return (start + bucket) % parallelism;
}

/**
 * Returns the writer index (0 … parallelism-1) of each record. Dynamic-bucket primary-key tables
 * need the pipeline's `assigner`: routing a record assigns its key's bucket (in source order).
 *
 * @throws SinkUsageError when a dynamic-bucket table is routed over several writers without an assigner.
 */
export function recordRouter(schema: TableSchema, parallelism: number, assigner?: BucketAssigner): RecordRoute {
  if (parallelism === 1) return () => 0;
  if (schema.primaryKeys.length === 0) {
    let next = 0;
    return () => {
      const w = next;
      next = (next + 1) % parallelism;
      return w;
    };
  }
  const typeOf = (name: string): DataType => schema.fields.find((f) => f.name === name)!.type;
  const partition = schema.partitionKeys.map((name) => ({ name, type: typeOf(name) }));
  const partitionTypes = partition.map((c) => c.type);
  const options = tableOptions(schema);
  const buckets = options.bucket;
  const internal =
    (record: RowObject) =>
    (c: { name: string; type: DataType }): Value =>
      toInternal(c.type, record[c.name]) as Value;
  if (buckets > 0) {
    // The writer's rule: `bucket-key`, else the trimmed primary key.
    const bucketKey = options.bucketKey.length > 0 ? [...options.bucketKey] : trimmedPrimaryKeys(schema);
    const hashed = bucketKey.map((name) => ({ name, type: typeOf(name) }));
    const hashedTypes = hashed.map((c) => c.type);
    const routeTypes = [...partitionTypes, INT];
    return (record) => {
      try {
        const value = internal(record);
        const bucket = bucketOfValues(hashedTypes, hashed.map(value), buckets);
        return bucketOfValues(routeTypes, [...partition.map(value), bucket], parallelism);
      } catch {
        // An invalid value: any writer will do, its validation reports the record.
        return 0;
      }
    };
  }
  if (assigner === undefined) {
    throw new SinkUsageError(
      `routing records of a dynamic-bucket table ('bucket' = ${buckets}) over ${parallelism} writers needs its bucket assigner`,
    );
  }
  // The writer hashes the trimmed primary key of a dynamic-bucket record.
  const key = trimmedPrimaryKeys(schema).map((name) => ({ name, type: typeOf(name) }));
  const keyTypes = key.map((c) => c.type);
  return (record) => {
    let part: Uint8Array;
    let hash: number;
    try {
      const value = internal(record);
      const partValues = partition.map(value);
      const keyValues = key.map(value);
      // A NULL key or partition value is invalid (primary-key columns are NOT NULL): assigning it a
      // bucket would index a key that is never written.
      if ([...partValues, ...keyValues].some((v) => v === null || v === undefined)) return 0;
      part = serializeBinaryRow(partitionTypes, partValues);
      hash = keyHashOf(keyTypes, keyValues);
    } catch {
      // An invalid value: any writer will do, its validation reports the record before it asks
      // the assigner for a bucket.
      return 0;
    }
    const bucket = assigner.assign(part, hash);
    return typeof bucket === 'number'
      ? writerOfBucket(part, bucket, parallelism)
      : bucket.then((b) => writerOfBucket(part, b, parallelism));
  };
}

/**
 * The view of the pipeline's shared `assigner` that writer `writerId` uses: the same buckets, and
 * a check that each bucket the writer is asked to write is one the router sends it. A bucket
 * written by two writers of one checkpoint would be compacted twice (each compaction replacing the
 * same live files), so a mismatch stops the pipeline instead.
 */
export function writerBucketAssigner(assigner: BucketAssigner, writerId: number, parallelism: number): BucketAssigner {
  const owned = (partition: Uint8Array, bucket: number): number => {
    const w = writerOfBucket(partition, bucket, parallelism);
    if (w !== writerId) {
      throw new WriterRoutingError(
        `sink writer ${writerId} was handed a record of dynamic bucket ${bucket}, which belongs to writer ${w}: ` +
          `the router and the table writer computed different key hashes`,
      );
    }
    return bucket;
  };
  return {
    assign(partition, keyHash) {
      const bucket = assigner.assign(partition, keyHash);
      return typeof bucket === 'number' ? owned(partition, bucket) : bucket.then((b) => owned(partition, b));
    },
    ...(assigner.prepareCommit ? { prepareCommit: (messages) => assigner.prepareCommit!(messages) } : {}),
    ...(assigner.inflightPrefixes ? { inflightPrefixes: () => assigner.inflightPrefixes!() } : {}),
    ...(assigner.abort ? { abort: () => assigner.abort!() } : {}),
  };
}

/**
 * The writer {@link recordRouter} sends the records of a (partition, bucket) of a primary-key
 * table to (`partition`: the serialized partition row, `values`: its column values).
 */
export function bucketWriter(
  schema: TableSchema,
  parallelism: number,
): (partition: Uint8Array, values: readonly Value[], bucket: number) => number {
  if (parallelism === 1) return () => 0;
  if (tableOptions(schema).bucket <= 0) return (partition, _values, bucket) => writerOfBucket(partition, bucket, parallelism);
  const routeTypes = [...schema.partitionKeys.map((name) => schema.fields.find((f) => f.name === name)!.type), INT];
  return (_partition, values, bucket) => bucketOfValues(routeTypes, [...values, bucket], parallelism);
}
