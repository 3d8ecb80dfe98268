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
import {
  readDeletionVectorsAt,
  toArrowField,
  type DataField,
  type DeletionVector,
  type ParquetWorkerPool,
  type TableSchema,
} from '@tidemark/format';
import type { DataSplit, PlannedFile } from '../scan/data-split.js';
import { makeBatch, takeBatch } from './arrow-take.js';
import type { Predicate } from '../predicate.js';
import { readDataFiles, type DataFileToRead, type ReadDataFileOptions } from './data-file-reader.js';
import { isRetraction, type MergeEngineOptions } from './merge-engine.js';
import { KeyValueChunks } from './merged-columns.js';
import type { ReadCache } from './read-cache.js';
import { fixedValues } from '../scan/bucket-filter.js';
import { matchingRows, sortedKeyRows } from './row-filter.js';
import type { FileIndexFilter } from '../file-index/file-index-filter.js';

/** What split readers need besides the split. */
export interface SplitReadContext {
  readonly fileIO: FileIO;
  /** Schema of a file's `_SCHEMA_ID`. */
  schemaOf(id: number): Promise<TableSchema>;
  /** Fields to produce, in output order. */
  readonly readFields: readonly DataField[];
  /** Rows per output batch of merged splits. */
  readonly batchSize?: number;
  /**
   * Row groups whose statistics prove no row satisfies this are skipped (names read fields). For
   * {@link readMergeSplit} it must name key and partition columns only (as skipping by another
   * column could drop a key's newer record): rows it rejects are dropped before the merge.
   */
  readonly rowFilter?: Predicate | null;
  /** Row groups decoded ahead of the consumer (see `readDataFiles`). */
  readonly readAhead?: number;
  /** Where parquet-wasm runs (default: the shared worker pool). */
  readonly pool?: ParquetWorkerPool | false;
  /** Keeps deletion vectors and data-file footers between reads (a long-lived table's reads). */
  readonly cache?: ReadCache;
  /** A key lookup: decoded row groups are kept in `cache` too (see `ReadDataFileOptions.keepDecoded`). */
  readonly keepDecoded?: boolean;
  /** A lookup of a single-column key: its values (see `ReadDataFileOptions.keyProbe`). */
  readonly keyProbe?: { readonly field: DataField; readonly values: readonly unknown[] };
  /** Skips files whose index rules out {@link rowFilter} (built from it; see `FileIndexFilter`). */
  readonly fileIndex?: FileIndexFilter;
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
export function readRawSplit(ctx: SplitReadContext, split: DataSplit, options: RawSplitOptions): AsyncGenerator<arrow.RecordBatch> {
  return readRawSplits(ctx, [split], options);
}

/**
 * Reads each file of the splits independently, in plan order, with the files' row groups decoded
 * ahead on the worker pool across split boundaries (see `readDataFiles`).
 */
export async function* readRawSplits(
  ctx: SplitReadContext,
  splits: Iterable<DataSplit>,
  options: RawSplitOptions,
): AsyncGenerator<arrow.RecordBatch> {
  let lastFile: ToRead | null = null;
  let dv: DeletionVector | null = null;
  for await (const { file, evolved, firstRow } of readDataFiles(ctx.fileIO, filesOf(ctx, splits, options), ctx.readFields, {
    keyValue: options.keyValue,
    ...readOptions(ctx),
  })) {
    if (file !== lastFile) {
      lastFile = file;
      dv = file.vectors === null ? null : ((await file.vectors).get(file.planned.meta.fileName) ?? null);
    }
    const n = evolved.batch.numRows;
    const kinds = evolved.valueKind;
    if (dv === null && (kinds === null || !kinds.some((k) => isRetraction(k)))) {
      yield evolved.batch;
      continue;
    }
    const keep: number[] = [];
    for (let i = 0; i < n; i++) {
      if (dv !== null && dv.isDeleted(firstRow + i)) continue;
      if (kinds !== null && isRetraction(kinds[i]!)) continue;
      keep.push(i);
    }
    if (keep.length === n) yield evolved.batch;
    else if (keep.length > 0) yield takeBatch(evolved.batch, keep);
  }
}

interface ToRead extends DataFileToRead {
  readonly split: DataSplit;
  readonly planned: PlannedFile;
  /** The deletion vectors of the split's files (shared by them), or null when none apply. */
  readonly vectors: Promise<Map<string, DeletionVector>> | null;
}

/**
 * The files to read of the splits, lazily (the schema of a file is loaded when it is opened).
 * A split's deletion vectors are read when its first file is pulled, with one ranged read per DV
 * index file, so they arrive while the reader fetches the data ahead.
 */
function* filesOf(ctx: SplitReadContext, splits: Iterable<DataSplit>, options: RawSplitOptions): Generator<ToRead> {
  for (const split of splits) {
    let vectors: Promise<Map<string, DeletionVector>> | null | undefined;
    for (const planned of split.files) {
      if (options.skipLevel0 && planned.meta.level === 0) continue;
      if (vectors === undefined) vectors = options.applyDeletionVectors ? splitVectors(ctx, split, options) : null;
      yield toRead(ctx, split, planned, vectors);
    }
  }
}

function splitVectors(ctx: SplitReadContext, split: DataSplit, options: RawSplitOptions): Promise<Map<string, DeletionVector>> | null {
  const wanted = split.files
    .filter((f) => !(options.skipLevel0 && f.meta.level === 0))
    .map((f) => split.deletionFiles.get(f.meta.fileName));
  const refs = wanted.filter((r) => r !== undefined);
  if (refs.length === 0) return null;
  const p = ctx.cache ? ctx.cache.deletionVectors(ctx.fileIO, refs) : readDeletionVectorsAt(ctx.fileIO, refs);
  // Awaited when the split's first batch arrives; a read that fails before then is reported there.
  p.catch(() => undefined);
  return p;
}

function toRead(
  ctx: SplitReadContext,
  split: DataSplit,
  planned: PlannedFile,
  vectors: Promise<Map<string, DeletionVector>> | null,
): ToRead {
  return {
    split,
    planned,
    vectors,
    path: planned.path,
    fileSize: planned.meta.fileSize,
    rowCount: planned.meta.rowCount,
    schema: ctx.schemaOf(planned.meta.schemaId),
    ...(ctx.fileIndex !== undefined ? { ruledOut: quiet(ctx.fileIndex.rulesOut(planned)) } : {}),
  };
}

/** `p`, whose failure is reported where it is awaited (the file may wait its turn in a read-ahead window). */
function quiet<T>(p: Promise<T>): Promise<T> {
  p.catch(() => undefined);
  return p;
}

function readOptions(ctx: SplitReadContext): Omit<ReadDataFileOptions, 'keyValue'> {
  return {
    ...(ctx.rowFilter ? { rowFilter: ctx.rowFilter } : {}),
    ...(ctx.readAhead !== undefined ? { readAhead: ctx.readAhead } : {}),
    ...(ctx.pool !== undefined ? { pool: ctx.pool } : {}),
    ...(ctx.cache !== undefined ? { cache: ctx.cache } : {}),
    ...(ctx.keepDecoded !== undefined ? { keepDecoded: ctx.keepDecoded } : {}),
    ...(ctx.keyProbe !== undefined ? { keyProbe: ctx.keyProbe } : {}),
  };
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
  const files = split.files.filter((f) => !(skipLevel0 && f.meta.level === 0)).map((f) => toRead(ctx, split, f, null));
  // Records of one key share its key columns: rows the key-only filter drops cannot change the
  // merged row of a key it keeps, so they are dropped before the merge (a lookup merges its keys only).
  const keyFilter = ctx.rowFilter ?? null;
  // A filter fixing a single-column key to some values: its rows are found by binary search (files are sorted by key).
  const keyValues = keyFilter !== null && keyFields.length === 1 ? fixedValues(keyFilter).get(keyFields[0]!.name) : undefined;
  // A filter that is only that list: the rows the search finds are exactly the rows it keeps.
  const searchIsFilter = keyValues !== undefined && isKeyList(keyFilter!, keyFields[0]!.name);
  for await (const { evolved } of readDataFiles(ctx.fileIO, files, mergeFields, { keyValue: true, ...readOptions(ctx) })) {
    let { batch, sequence, valueKind } = evolved;
    const found = keyValues === undefined ? null : sortedKeyRows(batch, mergeFields, keyFields[0]!, keyValues);
    if (found !== null && searchIsFilter) {
      // Exactly the rows the filter keeps: held where they are (the merge gathers them once).
      if (found.length > 0) held.add(batch.data.children, sequence!, valueKind!, found.length, found);
      continue;
    }
    if (found !== null) {
      if (found.length === 0) continue;
      batch = takeBatch(batch, found);
      sequence = takeTyped(sequence!, found);
      valueKind = takeTyped(valueKind!, found);
    }
    const keep = keyFilter === null ? null : matchingRows(batch, mergeFields, keyFilter);
    if (keep === null) held.add(batch.data.children, sequence!, valueKind!, batch.numRows);
    else if (keep.length > 0) {
      const kept = takeBatch(batch, keep);
      held.add(kept.data.children, takeTyped(sequence!, keep), takeTyped(valueKind!, keep), keep.length);
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

/** Whether `filter` is `column = v` or `column IN (…)` alone. */
function isKeyList(filter: Predicate, column: string): boolean {
  return (
    (filter.kind === 'in' && !filter.negated && filter.column === column) ||
    (filter.kind === 'compare' && filter.op === '=' && filter.column === column)
  );
}

function takeTyped<T extends BigInt64Array | Int8Array>(values: T, rows: readonly number[]): T {
  const out = new (values.constructor as new (n: number) => T)(rows.length);
  rows.forEach((r, i) => (out[i] = values[r]!));
  return out;
}
