/**
 * Which of the P writers of a pipeline takes a record. Records of a primary-key table go by
 * bucket: every record of one (partition, bucket) reaches the same writer, in source order, so the
 * updates of a key keep their order within a checkpoint and no two writers of one commit share a
 * bucket. Append tables are spread round-robin (order does not matter there).
 */
import { toInternal, tableOptions, type RowObject } from '@tidemark/core';
import { bucketOfValues, trimmedPrimaryKeys, type DataType, type TableSchema, type Value } from '@tidemark/format';

const INT: DataType = { root: 'INT', nullable: false } as DataType;

/** Returns the writer index (0 … parallelism-1) of each record. */
export function recordRouter(schema: TableSchema, parallelism: number): (record: RowObject) => number {
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
  const options = tableOptions(schema);
  const buckets = options.bucket;
  // The writer's rule: `bucket-key`, else the trimmed primary key.
  const bucketKey = options.bucketKey.length > 0 ? [...options.bucketKey] : trimmedPrimaryKeys(schema);
  // Fixed buckets: route by (partition, bucket). Otherwise (dynamic buckets) a key's bucket is
  // only known to the writer, so route by (partition, primary key): one key, one writer.
  const hashed = (buckets > 0 ? bucketKey : trimmedPrimaryKeys(schema)).map((name) => ({ name, type: typeOf(name) }));
  const routeTypes = [...partition.map((c) => c.type), ...(buckets > 0 ? [INT] : hashed.map((c) => c.type))];
  return (record) => {
    try {
      const internal = (c: { name: string; type: DataType }): Value => toInternal(c.type, record[c.name]) as Value;
      const tail =
        buckets > 0
          ? [
              bucketOfValues(
                hashed.map((c) => c.type),
                hashed.map(internal),
                buckets,
              ),
            ]
          : hashed.map(internal);
      return bucketOfValues(routeTypes, [...partition.map(internal), ...tail], parallelism);
    } catch {
      // An invalid value: any writer will do, its validation reports the record.
      return 0;
    }
  };
}

/**
 * The writer {@link recordRouter} sends the records of a (partition, bucket) of a fixed-bucket
 * primary-key table to (`partition`: the partition's column values).
 */
export function bucketWriter(schema: TableSchema, parallelism: number): (partition: readonly Value[], bucket: number) => number {
  if (parallelism === 1) return () => 0;
  const routeTypes = [...schema.partitionKeys.map((name) => schema.fields.find((f) => f.name === name)!.type), INT];
  return (partition, bucket) => bucketOfValues(routeTypes, [...partition, bucket], parallelism);
}
