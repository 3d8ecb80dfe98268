/**
 * `@tidemark/core`: Paimon tables in TypeScript. Start with {@link openTable} or
 * {@link FileSystemCatalog}; a `Table` reads, writes, commits, tags and rolls back. The names are
 * listed explicitly: what users need, plus the pieces the sibling packages (sink, maintenance, CLI)
 * build on, which are marked "building block" in their documentation. Everything else is internal.
 */

// ---- tables and catalogs -------------------------------------------------------------------
export { Table, openTable, readTable, type AppendOptions, type OpenTableOptions, type TableOverwriteOptions } from './table.js';
export { TableCommit, newTableCommit, type AutoExpireCallOption, type CommittableInput, type NewCommitOptions } from './table-commit.js';
export type { DeleteOptions, DeleteResult, RowChangeDryRun, UpdateChange, UpdateResult } from './row-change/row-change-table.js';
export type { AfterCommitCall, AfterCommitJobs } from './commit/after-commit.js';
export type {
  DeletionVectorFilePlan,
  OverwritePartitionPlan,
  OverwritePlan,
  PartitionRows,
  RowChangePlan,
  RowChangeProgress,
} from './row-change-plan.js';
export {
  DB_SUFFIX,
  DatabaseAlreadyExistsError,
  DatabaseNotEmptyError,
  DatabaseNotFoundError,
  FileSystemCatalog,
  InvalidIdentifierError,
  TableAlreadyExistsError,
  WarehouseNotFoundError,
  createTable,
  parseIdentifier,
  type CreateTableOptions,
  type FileSystemCatalogOptions,
  type Identifier,
} from './catalog.js';
export { buildInitialSchema, type ColumnSpec, type TableSpec } from './schema-builder.js';
export { SchemaValidationError } from './schema-validation.js';
export {
  SchemaChangeError,
  SchemaChanges,
  alterTable,
  applySchemaChanges,
  type AlterTableOptions,
  type ApplyContext,
  type ColumnPosition,
  type SchemaChange,
} from './schema-change.js';

// ---- table context: options and paths ------------------------------------------------------
export { isTableContext, tableContext, withSchema, type TableContext, type TableContextOptions } from './table-context.js';
export {
  CoreOptions,
  INTEGER_MAX_VALUE,
  InvalidOptionError,
  KNOWN_OPTION_KEYS,
  OPTION,
  coreOptions,
  editDistance,
  nearestKnownKey,
  parseDuration,
  parseMemorySize,
  parseStatsMode,
  tableOptions,
  warnUnknownOptions,
  type ChangelogProducer,
  type OptionsLogger,
  type PartitionExpireStrategy,
  type TagCreationMode,
  type TagCreationPeriod,
  type TagPeriodFormatter,
  type StatsMode,
} from './core-options.js';
export { FileStorePathFactory, PartitionPathError, metadataPaths, type PartitionRef, type PathFactoryOptions } from './path-factory.js';
export {
  EARLIEST_HINT,
  LATEST_HINT,
  MAIN_BRANCH,
  SCHEMA_PREFIX,
  SNAPSHOT_PREFIX,
  TAG_PREFIX,
  TablePaths,
  type TablePathsOptions,
} from './table-paths.js';

// ---- metadata ------------------------------------------------------------------------------
export { SchemaManager } from './schema-manager.js';
export { SnapshotManager, listNumberedFiles, parseNumberedName, type LatestProbe } from './snapshot-manager.js';
export { TagManager } from './tag-manager.js';
export { createTag, deleteTag, listTags, tagDurationOf, validateTagName, type CreateTagOptions } from './tags.js';
export { TagAutoCreation, type AutoTagEvent, type TagAutoCreationRunOptions } from './auto-tag/tag-auto-creation.js';
export { AutoTagState, runAutoTags, type AutoTagRunOptions, type AutoTagSummary } from './auto-tag/tag-auto-manager.js';

// ---- partitions: listing, dropping, expiration ---------------------------------------------
export { listPartitionEntries, type PartitionEntry } from './partition/partition-entries.js';
export {
  PartitionNotFoundError,
  dropPartitions,
  type DropPartitionsOptions,
  type DropPartitionsSummary,
  type DroppedPartition,
} from './partition/drop-partitions.js';
export {
  PartitionChangedError,
  expirePartitions,
  type ExpirePartitionsOptions,
  type ExpirePartitionsSummary,
  type ExpiredPartition,
  type SkippedPartition,
} from './partition/partition-expire.js';
export type { DatePattern } from './partition/date-pattern.js';
export { rollbackTo, type RollbackOptions, type RollbackResult } from './rollback.js';

// ---- branches ------------------------------------------------------------------------------
export {
  BranchManager,
  type BranchInfo,
  type CreateBranchOptions,
  type CreateBranchResult,
  type DeleteBranchResult,
} from './branch/branch-manager.js';
export type { FastForwardOptions, FastForwardResult } from './branch/fast-forward.js';
export { BranchAlreadyExistsError, BranchNotFoundError, BranchStateError, InvalidBranchNameError } from './branch/branch-errors.js';
export { parseTimestampMillis, resolveSnapshot, type SnapshotSources, type TimeTravelOptions } from './time-travel.js';

// ---- reading -------------------------------------------------------------------------------
export {
  IncrementalRead,
  TableRead,
  filterBatch,
  type IncrementalReadOptions,
  type ReadContext,
  type ReadOptions,
  type RowSelectionOptions,
} from './read/table-read.js';
export { FileIndexFilter, type FileIndexReadStats } from './file-index/file-index-filter.js';
export {
  and,
  bindPredicate,
  compareValues,
  evaluate,
  matches,
  mightMatch,
  not,
  or,
  partitionOnly,
  predicateColumns,
  statsFromRows,
  type AndPredicate,
  type ColumnStats,
  type CompareOp,
  type ComparePredicate,
  type InPredicate,
  type IsNullPredicate,
  type NotPredicate,
  type OrPredicate,
  type Predicate,
  type PredicateStats,
  type RowGetter,
  type Truth,
} from './predicate.js';
export { parsePredicate } from './predicate-parser.js';
export { FileStoreScan, type ScanFilter } from './scan/file-store-scan.js';
export type { DataSplit, DeletionFileRef, FileInfo, PlannedFile } from './scan/data-split.js';
export { ScanPlan } from './scan/scan-plan.js';
/** Building block (compaction): reads one data file mapped to a read schema. */
export {
  dataFileFormat,
  readDataFile,
  readDataFiles,
  readDataFileSegments,
  type DataFileSegment,
  type DataFileBatch,
  type DataFileToRead,
  type EvolvedBatch,
  type ReadDataFileOptions,
} from './read/data-file-reader.js';
/** Building blocks (tests, custom readers): a primary-key table's merge settings and the readers of one split. */
export { mergeEngineOptions, type MergeEngineOptions } from './read/merge-engine.js';
export { readMergeSplit, readRawSplit, type RawSplitOptions, type SplitReadContext } from './read/split-readers.js';
/** Building block: typed cell reader of an Arrow column. */
export { valueReader } from './read/arrow-values.js';

// ---- writing and committing ----------------------------------------------------------------
export {
  TableWrite,
  newTableWrite,
  type BucketCompactionReport,
  type RowGroupSource,
  type RowObject,
  type TableWriteOptions,
  type WriteInput,
} from './write/table-write.js';
export type { WriteValue } from './write/value-conversion.js';
export type { CommitMessage, Committable } from './commit-message.js';
export {
  FileStoreCommit,
  alreadyCommittedReason,
  type CommitAttemptReport,
  type CommitCallOptions,
  type CommitLogger,
  type CommitResult,
  type FileStoreCommitOptions,
  type OverwriteCallOptions,
  type DropPartitionsCallOptions,
} from './commit/file-store-commit.js';
export { commitOptionsFromTable, commitOptionsOf, type CommitOptions } from './commit/commit-options.js';
/** Building blocks (compaction, the sink's duplicate check): fold a snapshot's manifests to its live files. */
export { dataManifests, liveEntries, liveRecordCount, partitionKey } from './commit/manifest-fold.js';
export type { ManifestSource } from './commit/metadata-cache.js';
export { fullCompactionBaseLength } from './commit/manifest-merge.js';

// ---- maintenance (expiration runs after commits, so it lives here) -------------------------
export { expireSnapshots, type ExpireSnapshotsOptions, type ExpireSnapshotsSummary } from './expire/expire-snapshots.js';
export {
  changelogDecoupled,
  expireChangelogs,
  type ExpireChangelogsOptions,
  type ExpireChangelogsSummary,
} from './expire/expire-changelogs.js';
export { WRITE_ONLY_OPTION, autoExpireEnabled, expireAfterCommit, type AutoExpireOptions } from './expire/auto-expire.js';
export {
  DataFileLocator,
  checkAborted,
  latestSchema,
  manifestListNames,
  tryReadIndexManifest,
  tryReadManifestList,
  type MaintainedTable,
  type MaintenanceProgress,
  type MaintenanceRunOptions,
  type MaintenanceSummary,
} from './expire/table-files.js';

// ---- in-flight records (orphan-cleanup protection for files not yet committed) -------------
export {
  CorruptInflightRecordError,
  INFLIGHT_DIR,
  INFLIGHT_RECORD_MAX_AGE_MS,
  INFLIGHT_RECORD_REFRESH_MS,
  INFLIGHT_SUFFIX,
  InflightRecordError,
  clearInflightFiles,
  inflightDir,
  inflightRecordId,
  inflightRecordPath,
  listInflightRecords,
  parseInflightRecord,
  recordInflightFiles,
  recordInflightPrefixes,
  type InflightRecord,
  type InflightRecordFile,
  type RecordInflightOptions,
} from './inflight.js';

// ---- primary-key tables: key-value files, merge-tree writers, compaction, dynamic buckets ----
// Building blocks of the write path, compaction (maintenance) and the sink.
export {
  DeletionVectorConflictError,
  DynamicBucketConflictError,
  type IndexChanges,
  type WriteHashIndexFile,
  combineIndexEntries,
  snapshotIndexEntries,
  resolveHashIndexChanges,
} from './commit/index-changes.js';
export { BucketDvMaintainer, type DvIndexIncrement, type WriteIndexFile } from './deletion-vectors/bucket-dv-maintainer.js';
export {
  MAX_DYNAMIC_BUCKETS,
  DynamicBucketLimitError,
  type DynamicBucketOptions,
  type HashIndexChange,
  DynamicBucketAssigner,
  withHashIndexChanges,
} from './write/dynamic-bucket-assigner.js';
export { type PrimaryKeyBucketMode, primaryKeyBucketMode } from './write/bucket-mode.js';
export { replanOnBucketConflict } from './write/bucket-replan.js';
export {
  CompactionNotCommittedError,
  completeDroppedCompaction,
  compactsLevel0AtCommit,
  type DroppedCompactionCommitter,
  type DroppedCompactionTable,
} from './write/dropped-compaction.js';
export { KeyValueChunks, MergedKeyValues } from './read/merged-columns.js';
export { RowKind, type RowKindValue, rowKindToString, parseRowKind } from './write/key-value/row-kind.js';
export { type KeyValue, type KeyValueColumns, trimmedKeyFields, keyValueColumns } from './write/key-value/key-value.js';
export { type FileSource, type KeyValueFileWriterOptions, KeyValueFileWriter } from './write/key-value/key-value-file-writer.js';
export { type MergeFunction, createMergeFunction } from './write/key-value/merge-function.js';
export {
  type CompactionResult,
  type CompactManager,
  NO_COMPACTION,
  type MergeTreeCommit,
  type MergeTreeWriterOptions,
  MERGE_RECORD_OVERHEAD_BYTES,
  MergeTreeWriter,
} from './write/key-value/merge-tree-writer.js';
export { type BucketAssigner, keyHashOf, FixedBucketAssigner } from './write/key-value/bucket-assigner.js';
export { CompactionError, CompactionAbortedError } from './compact/compact-errors.js';
export { type KeyComparator, binaryRowKeyComparator, SortedRun, type LevelSortedRun } from './compact/sorted-run.js';
export { compareLevel0, Levels } from './compact/levels.js';
export {
  type CompactUnit,
  unitOfRuns,
  type UniversalCompactionOptions,
  type CompactStrategy,
  UniversalCompaction,
  ForceUpLevel0Compaction,
  createUnit,
  pickFullCompaction,
  isUsefulUnit,
} from './compact/universal-compaction.js';
export { intervalPartition } from './compact/interval-partition.js';
export {
  type CompactResult,
  type CompactRewriter,
  type CompactTaskOptions,
  upgradeResult,
  runCompactTask,
} from './compact/compact-task.js';
export { type CompactManagerOptions, type CompactionReport, MergeTreeCompactManager } from './compact/compact-manager.js';
export { type CompactionSettings, compactionSettings, compactStrategy } from './compact/compaction-settings.js';
export { type KeyValueSegment, type WindowMerge, type MergeReadContext, mergeSections } from './compact/merge-tree-reader.js';
export {
  type KeyValueSink,
  type MergeTreeRewriterContext,
  type BucketRewriter,
  MergeTreeCompactRewriter,
} from './compact/merge-tree-rewriter.js';
export {
  type BucketFilesContext,
  createBucketRewriter,
  type OpenBucketRewriterOptions,
  openBucketRewriter,
  type RewrittenTable,
} from './compact/bucket-rewriter.js';
export { LookupLevels, type LookupLevelsOptions, type LookupResult } from './compact/lookup-levels.js';
export { type DeletionVectorCompaction } from './compact/lookup-rewriter.js';
export {
  type WriterCompactionIncrement,
  type WriterCompactionOptions,
  type WriterDeletionVectors,
  WriterCompaction,
  type WriterCompactionTable,
  writerCompactManager,
} from './compact/writer-compaction.js';

// ---- errors --------------------------------------------------------------------------------
export {
  ConsumerError,
  PredicateError,
  SchemaNotFoundError,
  SnapshotNotFoundError,
  StreamStartError,
  TableNotFoundError,
  TagNotFoundError,
  TidemarkError,
  TidemarkUserError,
  TimeTravelError,
} from './errors.js';
export { CorruptTableError, InvalidReadOptionError, UnsupportedTableFeatureError } from './scan/errors.js';
export { CastValueError } from './cast/errors.js';
export {
  CommitConflictError,
  CommitInputError,
  CommitRetryExhaustedError,
  RollbackError,
  TagAlreadyExistsError,
} from './commit/commit-errors.js';
export { NotSupportedError, WriteValidationError } from './write/write-errors.js';
export { MaintenanceAbortedError, MaintenanceArgumentError, MaintenanceError } from './expire/maintenance-errors.js';
export { AggregationError } from './read/aggregate-functions.js';

// ---- used by the write path of primary-key tables, dynamic buckets and integrity checks ----
export { commitNotApplied } from './commit/commit-errors.js';
export { makeBatch } from './read/arrow-take.js';
export { toInternal } from './write/value-conversion.js';
export {
  // Building block of `verify`: recomputes a data file's value statistics to compare with its manifest entry.
  FileStatsCollector,
  type FileValueStats,
} from './write/value-stats.js';

// ---- streaming reads and consumers ----
export { CONSUMER_PREFIX, type ConsumerInfo, ConsumerManager, consumerJson } from './consumer-manager.js';
export { ChangelogManager } from './changelog-manager.js';
export {
  ROW_KIND_COLUMN,
  type StreamStart,
  type StreamReadOptions,
  type ChangeBatch,
  StreamRead,
  withRowKinds,
  changeBatchSchema,
} from './read/stream-read.js';
