/**
 * Routing of the table writer: which (partition, bucket) each row goes to. Fixed buckets hash the
 * bucket key as Java does; dynamic buckets ask the {@link BucketAssigner} with the hash of the
 * trimmed primary key; append tables without buckets put every row of a partition in bucket 0.
 */
import type * as arrow from 'apache-arrow';
import { bucketOfValues, serializeBinaryRow, trimmedPrimaryKeys, type DataType, type Value } from '@tidemark/format';
import { takeRows } from '../read/arrow-take.js';
import { valueReader } from '../read/arrow-values.js';
import type { FileStorePathFactory } from '../path-factory.js';
import type { TableContext } from '../table-context.js';
import { sameAsPreviousRow } from './arrow-columns.js';
import { primaryKeyBucketMode } from './bucket-mode.js';
import { DynamicBucketAssigner } from './dynamic-bucket-assigner.js';
import { keyHashOf, type BucketAssigner } from './key-value/bucket-assigner.js';
import type { TableWriteOptions } from './table-write-options.js';
import { WriteValidationError } from './write-errors.js';

/** Rows of one batch that go to one (partition, bucket). */
interface RouteGroup {
  readonly part: Value[];
  readonly bucket: number;
  /** Row count (filled in for the gather path only). */
  rows: number;
}

/** A batch's rows of one (partition, bucket): the partition values, the bucket and the rows. */
export type RoutedBatch = [Value[], number, arrow.RecordBatch];

/** Routes validated batches of a table to their (partition, bucket)s. */
export class RowRouter {
  readonly partitionTypes: DataType[];
  private readonly partitionIdx: number[];
  private readonly bucketKeyIdx: number[];
  private readonly bucketKeyTypes: DataType[];
  private readonly numBuckets: number;
  /** Dynamic buckets: the assigner, fed the hash of the trimmed primary key. */
  readonly assigner: BucketAssigner | null;
  private readonly paths: FileStorePathFactory;
  /** Dry runs: rows per partition (by {@link partKey}). */
  private readonly routed = new Map<string, { partition: Uint8Array; rows: number }>();

  /**
   * @param makeBatch builds a batch of the routed schema from column data (the gather path)
   * @throws WriteValidationError for a `bucket-key` outside the primary key or the schema, or an
   *   append table with buckets but no bucket key
   */
  constructor(
    ctx: TableContext,
    writeOptions: TableWriteOptions,
    private readonly makeBatch: (children: arrow.Data[], length: number) => arrow.RecordBatch,
  ) {
    const schema = ctx.schema;
    this.paths = ctx.paths;
    const indexOf = (name: string): number => schema.fields.findIndex((f) => f.name === name);
    this.partitionIdx = schema.partitionKeys.map(indexOf);
    this.partitionTypes = this.partitionIdx.map((i) => schema.fields[i]!.type);
    this.numBuckets = ctx.options.bucket;
    this.assigner = null;
    let bucketKey = ctx.options.bucketKey;
    if (schema.primaryKeys.length > 0) {
      const trimmed = trimmedPrimaryKeys(schema);
      if (this.numBuckets === -1) {
        primaryKeyBucketMode(schema);
        // A dry run routes rows to partitions only: no bucket index is read.
        this.assigner = writeOptions.dryRun
          ? null
          : (writeOptions.bucketAssigner ?? DynamicBucketAssigner.forTable(ctx, 'latest', writeOptions.replacePartitions ?? false));
        bucketKey = trimmed;
      } else {
        if (bucketKey.length === 0) bucketKey = trimmed;
        const outside = bucketKey.filter((k) => !schema.primaryKeys.includes(k));
        if (outside.length > 0) {
          throw new WriteValidationError(
            undefined,
            undefined,
            `option 'bucket-key' of a primary-key table must be part of the primary key (${outside.join(', ')} is not)`,
          );
        }
      }
    }
    this.bucketKeyIdx = this.numBuckets > 0 || this.assigner ? bucketKey.map(indexOf) : [];
    if (this.bucketKeyIdx.some((i) => i < 0)) {
      throw new WriteValidationError(undefined, undefined, `option 'bucket-key' names a column that is not in the schema`);
    }
    if (this.numBuckets > 0 && this.bucketKeyIdx.length === 0) {
      throw new WriteValidationError(undefined, undefined, `append table with 'bucket' = ${this.numBuckets} has no 'bucket-key'`);
    }
    this.bucketKeyTypes = this.bucketKeyIdx.map((i) => schema.fields[i]!.type);
  }

  /**
   * Splits a batch by (partition, bucket): zero-copy slices for sorted runs, a gather otherwise.
   * A row whose partition and bucket-key columns hold the same raw values as the previous row joins
   * the previous row's run without decoding anything, so sorted input costs O(runs), not O(rows).
   */
  async split(batch: arrow.RecordBatch): Promise<RoutedBatch[]> {
    const n = batch.numRows;
    if (this.partitionIdx.length === 0 && this.numBuckets <= 0 && !this.assigner) return n === 0 ? [] : [[[], 0, batch]];
    const cols = batch.data.children;
    const same = [
      ...this.partitionIdx.map((c, k) => sameAsPreviousRow(cols[c]!, this.partitionTypes[k]!)),
      ...this.bucketKeyIdx.map((c, k) => sameAsPreviousRow(cols[c]!, this.bucketKeyTypes[k]!)),
    ];
    const partValues = this.partitionIdx.map((c, k) => valueReader(cols[c]!, this.partitionTypes[k]!));
    const bucketKeyValues = this.bucketKeyIdx.map((c, k) => valueReader(cols[c]!, this.bucketKeyTypes[k]!));
    const groups = new Map<string, RouteGroup>();
    /** Run r covers rows [runStarts[r], runStarts[r + 1]) and goes to runGroups[r]. */
    const runStarts: number[] = [];
    const runGroups: RouteGroup[] = [];
    for (let r = 0; r < n; r++) {
      if (r > 0) {
        let k = 0;
        while (k < same.length && same[k]!(r)) k++;
        if (k === same.length) continue;
      }
      const part = partValues.map((read) => read(r));
      let bucket = 0;
      if (this.assigner) {
        const assigned = this.assigner.assign(
          serializeBinaryRow(this.partitionTypes, part),
          keyHashOf(
            this.bucketKeyTypes,
            bucketKeyValues.map((read) => read(r)),
          ),
        );
        bucket = typeof assigned === 'number' ? assigned : await assigned;
      } else if (this.numBuckets > 0)
        bucket = bucketOfValues(
          this.bucketKeyTypes,
          bucketKeyValues.map((read) => read(r)),
          this.numBuckets,
        );
      const key = `${bucket}|${partKey(part)}`;
      let g = groups.get(key);
      if (!g) groups.set(key, (g = { part, bucket, rows: 0 }));
      // Different raw values can still land in the same group (another row of the same bucket).
      if (runGroups.length > 0 && runGroups[runGroups.length - 1] === g) continue;
      runStarts.push(r);
      runGroups.push(g);
    }
    runStarts.push(n);
    const out: RoutedBatch[] = [];
    const runs = runGroups.length;
    if (runs <= Math.max(groups.size, n / 64)) {
      for (let k = 0; k < runs; k++) {
        const g = runGroups[k]!;
        out.push([g.part, g.bucket, batch.slice(runStarts[k]!, runStarts[k + 1]!)]);
      }
      return out;
    }
    for (let k = 0; k < runs; k++) runGroups[k]!.rows += runStarts[k + 1]! - runStarts[k]!;
    const indices = new Map<RouteGroup, { rows: Int32Array; filled: number }>();
    for (const g of groups.values()) indices.set(g, { rows: new Int32Array(g.rows), filled: 0 });
    for (let k = 0; k < runs; k++) {
      const idx = indices.get(runGroups[k]!)!;
      for (let r = runStarts[k]!; r < runStarts[k + 1]!; r++) idx.rows[idx.filled++] = r;
    }
    for (const g of groups.values()) {
      const rows = indices.get(g)!.rows;
      const children = cols.map((c) => takeRows(c, rows));
      out.push([g.part, g.bucket, this.makeBatch(children, rows.length)]);
    }
    return out;
  }

  /**
   * Dry runs ({@link TableWriteOptions.dryRun}): the rows written so far per partition (a
   * serialized partition row; empty for an unpartitioned table), in the order first seen.
   */
  routedRows(): Array<{ readonly partition: Uint8Array; readonly rows: number }> {
    return [...this.routed.values()].map((r) => ({ partition: r.partition, rows: r.rows }));
  }

  /** Counts the rows of a validated batch per partition, checking that each partition has a path as the writer does. */
  countRouted(batch: arrow.RecordBatch): void {
    const cols = batch.data.children;
    const partValues = this.partitionIdx.map((c, k) => valueReader(cols[c]!, this.partitionTypes[k]!));
    for (let r = 0; r < batch.numRows; r++) {
      const part = partValues.map((read) => read(r));
      const key = partKey(part);
      const slot = this.routed.get(key);
      if (slot !== undefined) {
        slot.rows++;
        continue;
      }
      try {
        this.paths.partitionPath(part);
      } catch (e) {
        throw new WriteValidationError(undefined, r, `cannot build the partition path: ${(e as Error).message}`);
      }
      this.routed.set(key, { partition: serializeBinaryRow(this.partitionTypes, part), rows: 1 });
    }
  }
}

/** A string key of partition values (one per distinct partition). */
export function partKey(values: readonly Value[]): string {
  if (values.length === 0) return '';
  return values
    .map((v) => {
      if (v === null) return 'N';
      if (v instanceof Uint8Array) return 'b' + Buffer.from(v).toString('hex');
      if (typeof v === 'object') return 'o' + JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x));
      // String(-0) is '0': -0.0 is a partition of its own (`k=-0.0`), as in Java.
      return typeof v + ':' + (Object.is(v, -0) ? '-0' : String(v));
    })
    .join('\u0000');
}
