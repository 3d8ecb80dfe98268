/**
 * Readers of one split (the files of one partition and bucket):
 * - {@link readRawSplit}: every file as-is (append tables, deletion-vector tables, incremental
 *   reads), minus deletion-vector rows and, for primary-key files, minus -U/-D rows;
 * - {@link readMergeSplit}: merge-on-read of a primary-key bucket (docs/format.md, "Merge on read"): all
 *   files are read, records are sort-merged by trimmed key, `sequence.field` values (if any) and
 *   `_SEQUENCE_NUMBER`, and the merge engine picks (or, for aggregation, computes) the row per key.
 * Both yield batches in the read fields' Arrow schema.
 */
import * as arrow from 'apache-arrow';
import type { FileIO } from '@tidemark/storage';
import { readDeletionVector, toArrowField, type DataField, type DeletionVector, type TableSchema } from '@tidemark/format';
import type { DataSplit, PlannedFile } from '../scan/data-split.js';
import { makeBatch, takeBatch } from './arrow-take.js';
import { readDataFile } from './data-file-reader.js';
import { isRetraction, type MergeEngineOptions } from './merge-engine.js';
import { KeyValueChunks } from './merged-columns.js';

/** What split readers need besides the split. */
export interface SplitReadContext {
  readonly fileIO: FileIO;
  /** Schema of a file's `_SCHEMA_ID`. */
  schemaOf(id: number): Promise<TableSchema>;
  /** Fields to produce, in output order. */
  readonly readFields: readonly DataField[];
  /** Rows per output batch of merged splits. */
  readonly batchSize?: number;
}

/** Options of {@link readRawSplit}. */
export interface RawSplitOptions {
  /** Files have the primary-key layout; -U/-D rows are dropped. */
  readonly keyValue: boolean;
  /** Skip level-0 files (batch reads of deletion-vector PK tables). */
  readonly skipLevel0: boolean;
  /** Apply the split's deletion vectors. */
  readonly applyDeletionVectors: boolean;
}

const DEFAULT_MERGE_BATCH = 65_536;

/** Reads each file of the split independently. */
export async function* readRawSplit(ctx: SplitReadContext, split: DataSplit, options: RawSplitOptions): AsyncGenerator<arrow.RecordBatch> {
  for (const file of split.files) {
    if (options.skipLevel0 && file.meta.level === 0) continue;
    const dvRef = options.applyDeletionVectors ? split.deletionFiles.get(file.meta.fileName) : undefined;
    const dv: DeletionVector | null = dvRef ? await readDeletionVector(ctx.fileIO, dvRef.path, dvRef.range) : null;
    let position = 0;
    for await (const evolved of readFile(ctx, file, ctx.readFields, options.keyValue)) {
      const n = evolved.batch.numRows;
      const kinds = evolved.valueKind;
      if (dv === null && (kinds === null || !kinds.some((k) => isRetraction(k)))) {
        position += n;
        yield evolved.batch;
        continue;
      }
      const keep: number[] = [];
      for (let i = 0; i < n; i++) {
        if (dv !== null && dv.isDeleted(position + i)) continue;
        if (kinds !== null && isRetraction(kinds[i]!)) continue;
        keep.push(i);
      }
      position += n;
      if (keep.length === n) yield evolved.batch;
      else if (keep.length > 0) yield takeBatch(evolved.batch, keep);
    }
  }
}

/**
 * Merge-on-read of one primary-key bucket. `keyFields` are the trimmed primary-key fields of the
 * read schema, `sequenceFields` the `sequence.field` columns (records of a key are ordered by
 * them, nulls first, before `_SEQUENCE_NUMBER`), `extraFields` other columns the merge needs
 * (partial-update sequence groups). Holds the bucket's needed columns in memory while merging.
 */
export async function* readMergeSplit(
  ctx: SplitReadContext,
  split: DataSplit,
  keyFields: readonly DataField[],
  merge: MergeEngineOptions,
  skipLevel0: boolean,
  sequenceFields: readonly DataField[] = [],
  extraFields: readonly DataField[] = [],
): AsyncGenerator<arrow.RecordBatch> {
  const outCount = ctx.readFields.length;
  const mergeFields = [...ctx.readFields];
  for (const k of [...keyFields, ...sequenceFields, ...extraFields]) if (!mergeFields.some((f) => f.id === k.id)) mergeFields.push(k);
  const held = new KeyValueChunks(mergeFields, keyFields, sequenceFields);
  for (const file of split.files) {
    if (skipLevel0 && file.meta.level === 0) continue;
    for await (const evolved of readFile(ctx, file, mergeFields, true)) {
      held.add(evolved.batch.data.children, evolved.sequence!, evolved.valueKind!, evolved.batch.numRows);
    }
  }
  if (held.size === 0) return;
  const schema = new arrow.Schema(ctx.readFields.map((f) => toArrowField(f)));
  const size = ctx.batchSize ?? DEFAULT_MERGE_BATCH;
  const merged = held.merge(merge, false, outCount);
  for (let start = 0; start < merged.length; start += size) {
    const end = Math.min(merged.length, start + size);
    yield makeBatch(schema, merged.columns(start, end), end - start);
  }
}

async function* readFile(ctx: SplitReadContext, file: PlannedFile, fields: readonly DataField[], keyValue: boolean) {
  const schema = await ctx.schemaOf(file.meta.schemaId);
  yield* readDataFile(ctx.fileIO, { path: file.path, fileSize: file.meta.fileSize, rowCount: file.meta.rowCount, schema }, fields, {
    keyValue,
  });
}
