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
import { makeBatch, takeBatch, takeChunks } from './arrow-take.js';
import { valueReader } from './arrow-values.js';
import { readDataFile } from './data-file-reader.js';
import { buildAggregatedColumn, chunkedAggregationInput } from './aggregated-columns.js';
import {
  aggregateSorted,
  isRetraction,
  mergeSorted,
  sortRecords,
  type KeyValueRecord,
  type MergeEngineOptions,
} from './merge-engine.js';

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
export async function* readRawSplit(
  ctx: SplitReadContext,
  split: DataSplit,
  options: RawSplitOptions,
): AsyncGenerator<arrow.RecordBatch> {
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
 * them, nulls first, before `_SEQUENCE_NUMBER`). Holds the bucket's needed columns in memory
 * while merging.
 */
export async function* readMergeSplit(
  ctx: SplitReadContext,
  split: DataSplit,
  keyFields: readonly DataField[],
  merge: MergeEngineOptions,
  skipLevel0: boolean,
  sequenceFields: readonly DataField[] = [],
): AsyncGenerator<arrow.RecordBatch> {
  const outCount = ctx.readFields.length;
  const mergeFields = [...ctx.readFields];
  for (const k of [...keyFields, ...sequenceFields]) if (!mergeFields.some((f) => f.id === k.id)) mergeFields.push(k);
  const keyPositions = keyFields.map((k) => mergeFields.findIndex((f) => f.id === k.id));
  const seqPositions = sequenceFields.map((k) => mergeFields.findIndex((f) => f.id === k.id));

  const chunks: arrow.Data[][] = mergeFields.map(() => []);
  const records: KeyValueRecord[] = [];
  let chunk = 0;
  for (const file of split.files) {
    if (skipLevel0 && file.meta.level === 0) continue;
    for await (const evolved of readFile(ctx, file, mergeFields, true)) {
      const columns = evolved.batch.data.children;
      columns.forEach((c, i) => chunks[i]!.push(c));
      const readers = keyPositions.map((p, j) => valueReader(columns[p]!, keyFields[j]!.type));
      const seqReaders = seqPositions.map((p, j) => valueReader(columns[p]!, sequenceFields[j]!.type));
      const seq = evolved.sequence!;
      const kinds = evolved.valueKind!;
      for (let r = 0; r < evolved.batch.numRows; r++) {
        const record: KeyValueRecord = { key: readers.map((read) => read(r)), sequence: seq[r]!, kind: kinds[r]!, chunk, row: r };
        records.push(seqReaders.length > 0 ? { ...record, userSequence: seqReaders.map((read) => read(r)) } : record);
      }
      chunk++;
    }
  }
  if (records.length === 0) return;
  const sorted = sortRecords(records);
  const schema = new arrow.Schema(ctx.readFields.map((f) => toArrowField(f)));
  const size = ctx.batchSize ?? DEFAULT_MERGE_BATCH;
  if (merge.engine === 'aggregation') {
    const specs = ctx.readFields.map((f) => {
      const spec = merge.aggregations?.get(f.name);
      if (!spec) throw new TypeError(`no aggregate function resolved for column '${f.name}'`);
      return spec;
    });
    const input = chunkedAggregationInput(chunks.slice(0, outCount), ctx.readFields.map((f) => f.type));
    const merged = aggregateSorted(sorted, merge, specs, input);
    for (let start = 0; start < merged.length; start += size) {
      const slice = merged.slice(start, start + size);
      const columns = ctx.readFields.map((f, c) =>
        buildAggregatedColumn(
          slice.map((m) => m.cells![c]!),
          c,
          chunks[c]!,
          schema.fields[c]!.type,
          f.type,
          input,
        ),
      );
      yield makeBatch(schema, columns, slice.length);
    }
    return;
  }
  const merged = mergeSorted(sorted, merge, outCount, (rec, c) => !chunks[c]![rec.chunk]!.getValid(rec.row));
  for (let start = 0; start < merged.length; start += size) {
    const slice = merged.slice(start, start + size);
    const columns: arrow.Data[] = [];
    for (let c = 0; c < outCount; c++) {
      const chunkIdx = new Uint32Array(slice.length);
      const rowIdx = new Uint32Array(slice.length);
      slice.forEach((m, k) => {
        const src = m.columnSources?.[c] ?? m.record;
        chunkIdx[k] = src.chunk;
        rowIdx[k] = src.row;
      });
      columns.push(takeChunks(chunks[c]!, { chunks: chunkIdx, rows: rowIdx }, schema.fields[c]!.type));
    }
    yield makeBatch(schema, columns, slice.length);
  }
}

async function* readFile(
  ctx: SplitReadContext,
  file: PlannedFile,
  fields: readonly DataField[],
  keyValue: boolean,
) {
  const schema = await ctx.schemaOf(file.meta.schemaId);
  yield* readDataFile(ctx.fileIO, { path: file.path, fileSize: file.meta.fileSize, schema }, fields, { keyValue });
}
