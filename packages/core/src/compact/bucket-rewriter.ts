/**
 * The compaction rewriter of one bucket of a table: reads go through the bucket's directory with
 * each file's own schema; each key window is merged by the table's merge engine exactly as reads
 * and the writer's flushes merge (one shared merger); the survivors are written by the key-value
 * file writer as files of the output level (file source COMPACT).
 */
import { randomUUID } from 'node:crypto';
import { FILE_SOURCE_APPEND, FILE_SOURCE_COMPACT, type DataField, type DataFileMeta, type TableSchema, type Value } from '@tidemark/format';
import type { FileIO } from '@tidemark/storage';
import type { SchemaManager } from '../schema-manager.js';
import type { TablePaths } from '../table-paths.js';
import type { DataSplit } from '../scan/data-split.js';
import { coreOptions, type CoreOptions } from '../core-options.js';
import { clearInflightFiles, recordInflightPrefixes } from '../inflight.js';
import { valueReader } from '../read/arrow-values.js';
import { compareKeys } from '../key-order.js';
import { isRetraction, mergeEngineOptions, type MergeEngineOptions } from '../read/merge-engine.js';
import { KeyValueChunks } from '../read/merged-columns.js';
import { KeyValueFileWriter, type FileSource } from '../write/key-value/key-value-file-writer.js';
import { trimmedKeyFields } from '../write/key-value/key-value.js';
import { changelogWindowMerge, type LookupHit } from './changelog-merge.js';
import type { Levels } from './levels.js';
import { LookupLevels } from './lookup-levels.js';
import { LookupCompactRewriter, lookupWindowMerge, type DeletionVectorCompaction } from './lookup-rewriter.js';
import { MergeTreeCompactRewriter, type BucketRewriter, type ChangelogRewriteContext, type KeyValueSink } from './merge-tree-rewriter.js';
import type { KeyValueSegment, MergeReadContext, WindowMerge } from './merge-tree-reader.js';
import { withExtraFiles } from '../file-index/data-file-index-writer.js';

/** Where one bucket's files are and how new ones are named. */
export interface BucketFilesContext {
  readonly fileIO: FileIO;
  /** The schema outputs are written with (the table's current one). */
  readonly schema: TableSchema;
  /** Schema of a file's `_SCHEMA_ID`. */
  schemaOf(id: number): Promise<TableSchema>;
  /** Full path of a data file of the bucket from its name. */
  pathOf(fileName: string): string;
  /** A fresh data file name. */
  newFileName(): string;
  /** Awaited before each data file is written (in-flight record). */
  beforeFile?(): Promise<void>;
  readonly signal?: AbortSignal;
  /** Called with each input file once it has been read through. */
  readonly onFileRead?: (file: DataFileMeta) => void;
  /**
   * `changelog-producer` = `lookup` / `full-compaction`: the bucket's levels (lookups read the
   * levels below a compaction's output; the max level holds the old values of a full compaction)
   * and the names of changelog files. Without them no changelog is produced.
   */
  readonly changelog?: { readonly levels: Levels; newFileName(): string };
  /**
   * Deletion-vector tables: inputs are read with their vectors, and records the compacted keys
   * replace in higher levels are marked deleted (lookup-rewriter.ts).
   */
  readonly deletionVectors?: DeletionVectorCompaction;
}

/** A compaction rewriter of one bucket; `onClose` runs when it is closed. */
export function createBucketRewriter(ctx: BucketFilesContext, onClose?: () => Promise<void>): BucketRewriter {
  const { schema } = ctx;
  const options = coreOptions(schema);
  const merge = mergeEngineOptions(schema);
  const dv = ctx.deletionVectors;
  const read = mergeReadContext(ctx);
  const newSink = sinkFactory(ctx, options);
  const changelog = changelogRewriteContext(ctx, options, merge, read, newSink);
  const mergesOldValues = dv !== undefined && mergesReplacedRecords(merge);
  const rewriter = new MergeTreeCompactRewriter(
    {
      read,
      newSink: (level) => newSink(level, () => ctx.newFileName()),
      ...(changelog !== undefined ? { changelog } : {}),
      merge: (dropDelete, outputLevel) => compactionWindowMerge(schema, merge, read, dv, mergesOldValues, dropDelete, outputLevel),
      deleteFiles: async (files) => {
        await ctx.fileIO.deleteMany(files.flatMap((f) => withExtraFiles(ctx.pathOf(f.fileName), f)));
      },
    },
    onClose,
  );
  return dv === undefined ? rewriter : new LookupCompactRewriter(rewriter, read, dv, mergesOldValues);
}

/** How a compaction reads the bucket's files: every field, each file with its schema (and its deletion vector). */
function mergeReadContext(ctx: BucketFilesContext): MergeReadContext {
  const { schema } = ctx;
  const dv = ctx.deletionVectors;
  const keyPositions = trimmedKeyFields(schema).map((k) => schema.fields.findIndex((f) => f.id === k.id));
  return {
    fileIO: ctx.fileIO,
    pathOf: (name) => ctx.pathOf(name),
    schemaOf: (id) => ctx.schemaOf(id),
    readFields: schema.fields,
    keyPositions,
    ...(ctx.signal !== undefined ? { signal: ctx.signal } : {}),
    ...(ctx.onFileRead !== undefined ? { onFileRead: ctx.onFileRead } : {}),
    ...(dv !== undefined ? { deletionVectorOf: (name: string) => dv.maintainer.deletionVectorOf(name) } : {}),
  };
}

/** Opens a key-value file writer of a level as a sink of the rewriter. */
type SinkFactory = (level: number, newFileName: () => string, fileSource?: FileSource) => KeyValueSink;

function sinkFactory(ctx: BucketFilesContext, options: CoreOptions): SinkFactory {
  return (level, newFileName, fileSource = FILE_SOURCE_COMPACT) => {
    const writer = new KeyValueFileWriter({
      fileIO: ctx.fileIO,
      schema: ctx.schema,
      options,
      pathOf: (name) => ctx.pathOf(name),
      newFileName,
      level,
      fileSource,
      ...(ctx.beforeFile !== undefined ? { beforeFile: () => ctx.beforeFile!() } : {}),
    });
    return {
      write: (rows) => writer.write(rows),
      close: () => writer.close(),
      abort: () => writer.abort(),
    };
  };
}

/**
 * What the rewriter needs to produce changelog files (`changelog-producer` = `lookup` /
 * `full-compaction` with the bucket's levels given), or undefined: no changelog.
 */
function changelogRewriteContext(
  ctx: BucketFilesContext,
  options: CoreOptions,
  merge: MergeEngineOptions,
  read: MergeReadContext,
  newSink: SinkFactory,
): ChangelogRewriteContext | undefined {
  const producer = options.changelogProducer;
  if (ctx.changelog === undefined || (producer !== 'lookup' && producer !== 'full-compaction')) return undefined;
  const { schema } = ctx;
  const dv = ctx.deletionVectors;
  const { levels, newFileName } = ctx.changelog;
  const lookup =
    producer === 'lookup'
      ? new LookupLevels(levels, {
          fileIO: ctx.fileIO,
          pathOf: (name) => ctx.pathOf(name),
          schemaOf: (id) => ctx.schemaOf(id),
          readFields: schema.fields,
          keyFields: trimmedKeyFields(schema),
          // Old values of a deletion-vector table: rows its vectors mark are gone.
          ...(dv !== undefined ? { isDeleted: (name: string, pos: number) => dv.maintainer.isDeleted(name, pos) } : {}),
        })
      : null;
  // Changelog files are written with file source APPEND, as Java's changelog writer does.
  return {
    producer,
    maxLevel: levels.maxLevel,
    newSink: (level) => newSink(level, newFileName, FILE_SOURCE_APPEND),
    merge: (outputLevel, dropDelete, emit) => {
      const m = changelogWindowMerge({
        schema,
        merge,
        producer,
        maxLevel: levels.maxLevel,
        dropDelete,
        rowDeduplicate: options.changelogRowDeduplicate,
        rowDeduplicateIgnoreFields: options.changelogRowDeduplicateIgnoreFields,
        ...(lookup !== null ? { lookup: (keys) => lookupAll(lookup, keys, outputLevel + 1) } : {}),
        emit,
      });
      return dv === undefined ? m : lookupWindowMerge(m, outputLevel, read, dv);
    },
  };
}

/** The merge of one key window of a compaction to `outputLevel`; deletion-vector tables mark what it replaces. */
function compactionWindowMerge(
  schema: TableSchema,
  merge: MergeEngineOptions,
  read: MergeReadContext,
  dv: DeletionVectorCompaction | undefined,
  mergesOldValues: boolean,
  dropDelete: boolean,
  outputLevel: number,
): WindowMerge {
  if (dv === undefined) return windowMerge(schema, merge, dropDelete);
  // The record a level-0 key replaces is marked deleted: its values must live on in the merge.
  const inner = mergesOldValues
    ? changelogWindowMerge({
        schema,
        merge,
        producer: 'lookup',
        maxLevel: dv.lookup.maxLevel,
        dropDelete,
        rowDeduplicate: false,
        lookup: (keys) => lookupAll(dv.lookup, keys, outputLevel + 1),
      })
    : windowMerge(schema, merge, dropDelete);
  return lookupWindowMerge(inner, outputLevel, read, dv);
}

/**
 * Whether the merge of a key's new records with the record it had in levels ≥ 1 can differ from
 * the newest new record (Java's lookup compaction merges them always). Only a deduplicate table
 * without `sequence.field` keeps the newest record whatever came before: level-0 records are newer
 * than every record above them, and it drops retractions on input under `ignore-delete`.
 */
function mergesReplacedRecords(merge: MergeEngineOptions): boolean {
  return merge.engine !== 'deduplicate' || (merge.sequenceFields?.length ?? 0) > 0;
}

/**
 * Merges a window with the shared merger: one row per key with the row kind a writer stores, or
 * (with `dropDelete`) without the keys whose result is a retraction.
 */
function windowMerge(schema: TableSchema, merge: MergeEngineOptions, dropDelete: boolean): WindowMerge {
  const keyFields = trimmedKeyFields(schema);
  const sequenceFields = (merge.sequenceFields ?? []).map((n) => schema.fields.find((f) => f.name === n)!);
  const keyPositions = keyFields.map((k) => schema.fields.findIndex((f) => f.id === k.id));
  return (segments): KeyValueSegment | null => {
    // Records of one run with one record per key need no merge: a key's only record passes
    // through as it is (as Java's reducer does), so the segment is the result.
    const only = segments.length === 1 ? segments[0]! : null;
    if (only !== null && (!dropDelete || !only.kinds.some((k) => isRetraction(k))) && uniqueKeys(only, keyPositions, keyFields)) {
      return only;
    }
    const held = new KeyValueChunks(schema.fields, keyFields, sequenceFields);
    for (const s of segments) held.add(s.columns, s.sequence, s.kinds, s.rows);
    const merged = held.merge(merge, !dropDelete);
    if (merged.length === 0) return null;
    return { columns: merged.columns(), sequence: merged.sequences(), kinds: merged.kinds(), rows: merged.length };
  };
}

/** Looks keys up one after another (they come sorted, so a loaded file serves a run of them). */
async function lookupAll(lookup: LookupLevels, keys: readonly (readonly Value[])[], startLevel: number): Promise<(LookupHit | null)[]> {
  const out: (LookupHit | null)[] = [];
  for (const key of keys) {
    const r = await lookup.lookup(key, startLevel);
    out.push(r === null ? null : { row: r.row, sequence: r.sequence, kind: r.kind, level: r.level });
  }
  return out;
}

/** Whether the segment's keys strictly increase (it holds one record per key). */
function uniqueKeys(segment: KeyValueSegment, keyPositions: readonly number[], keyFields: readonly DataField[]): boolean {
  const readers = keyPositions.map((p, j) => valueReader(segment.columns[p]!, keyFields[j]!.type));
  let previous: Value[] | null = null;
  for (let r = 0; r < segment.rows; r++) {
    const key = readers.map((read) => read(r));
    if (previous !== null && compareKeys(previous, key) >= 0) return false;
    previous = key;
  }
  return true;
}

/** What {@link openBucketRewriter} needs of the table it compacts (a `Table` provides it). */
export interface RewrittenTable {
  readonly fileIO: FileIO;
  /** The table directory (its in-flight records live there). */
  readonly location: string;
  readonly paths: TablePaths;
  readonly schemaManager: SchemaManager;
}

/** Options of {@link openBucketRewriter}. */
export interface OpenBucketRewriterOptions {
  readonly signal?: AbortSignal;
  /** Called with each input file once it has been read through. */
  readonly onFileRead?: (file: DataFileMeta) => void;
  /** The bucket's levels: given, compactions produce the changelog of a `lookup` / `full-compaction` table. */
  readonly levels?: Levels;
  /** Deletion-vector tables: the bucket's vectors and lookups (see {@link BucketFilesContext.deletionVectors}). */
  readonly deletionVectors?: DeletionVectorCompaction;
}

/**
 * The rewriter of one bucket (`split`) of `table` for a compaction run, writing with `schema` (the
 * latest). Its output files share one name prefix, recorded in flight before the first is
 * written, so that orphan cleanup leaves them alone until the run is closed (after its commit).
 */
export async function openBucketRewriter(
  table: RewrittenTable,
  schema: TableSchema,
  split: DataSplit,
  options: OpenBucketRewriterOptions = {},
): Promise<BucketRewriter> {
  const uuid = randomUUID();
  const o = coreOptions(schema);
  const prefix = `${o.dataFilePrefix}${uuid}-`;
  const changelogPrefix = `${o.changelogFilePrefix}${uuid}-`;
  const recordId = `compact-${uuid}`;
  let counter = 0;
  let recorded = false;
  const levels = options.levels;
  return createBucketRewriter(
    {
      fileIO: table.fileIO,
      schema,
      schemaOf: (id) => (id === schema.id ? Promise.resolve(schema) : table.schemaManager.schema(id)),
      pathOf: (name) => table.paths.dataFilePath(split.partitionPath, split.bucket, name),
      newFileName: () => `${prefix}${counter++}.parquet`,
      beforeFile: async () => {
        if (recorded) return;
        await recordInflightPrefixes(table.fileIO, table.location, recordId, levels !== undefined ? [prefix, changelogPrefix] : [prefix]);
        recorded = true;
      },
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
      ...(options.onFileRead !== undefined ? { onFileRead: options.onFileRead } : {}),
      ...(levels !== undefined ? { changelog: { levels, newFileName: () => `${changelogPrefix}${counter++}.parquet` } } : {}),
      ...(options.deletionVectors !== undefined ? { deletionVectors: options.deletionVectors } : {}),
    },
    async () => {
      if (recorded) await clearInflightFiles(table.fileIO, table.location, recordId).catch(() => undefined);
    },
  );
}
