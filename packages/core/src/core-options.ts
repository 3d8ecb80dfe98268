/**
 * Table options with Paimon's names and defaults (Java `CoreOptions`).
 *
 * Paimon writes only the user-given options into `schema-N`; defaults are applied when the
 * options are read, which is what {@link CoreOptions} does. Values stay strings in the schema and
 * are parsed here with Paimon's syntax (`256 mb`, `1 h`, `10 ms`). This module is the only place
 * that reads raw option values: everything else asks a {@link CoreOptions} (usually the one of a
 * `TableContext`), so that one value is read the same way by the writer, the scan and the committer.
 *
 * Values are parsed on first access, not when the options are created: a table with one bad
 * option can still be opened and read, and the operation that needs the option fails with an
 * {@link InvalidOptionError} naming it.
 */
import type { AvroCodecName, TableSchema } from '@tidemark/format';
import { TidemarkUserError } from './errors.js';
import { compileDatePattern, type DatePattern } from './partition/date-pattern.js';

/** An option value that does not parse (bad size, duration, number or enum). */
export class InvalidOptionError extends TidemarkUserError {
  constructor(
    readonly option: string,
    readonly value: string,
    expected: string,
    message?: string,
  ) {
    super(message ?? `table option '${option}' has invalid value '${value}': expected ${expected}`);
  }
}

/** Option names read by tidemark (Paimon spelling). */
export const OPTION = {
  BUCKET: 'bucket',
  BUCKET_KEY: 'bucket-key',
  FILE_FORMAT: 'file.format',
  FILE_COMPRESSION: 'file.compression',
  FILE_COMPRESSION_ZSTD_LEVEL: 'file.compression.zstd-level',
  TARGET_FILE_SIZE: 'target-file-size',
  WRITE_BUFFER_SIZE: 'write-buffer-size',
  LOOKUP_CACHE_MAX_MEMORY_SIZE: 'lookup.cache-max-memory-size',
  FILE_INDEX_BLOOM_FILTER_COLUMNS: 'file-index.bloom-filter.columns',
  FILE_INDEX_IN_MANIFEST_THRESHOLD: 'file-index.in-manifest-threshold',
  FILE_INDEX_READ_ENABLED: 'file-index.read.enabled',
  WRITE_BUFFER_SPILLABLE: 'write-buffer-spillable',
  MANIFEST_TARGET_FILE_SIZE: 'manifest.target-file-size',
  MANIFEST_MERGE_MIN_COUNT: 'manifest.merge-min-count',
  MANIFEST_FULL_COMPACTION_THRESHOLD_SIZE: 'manifest.full-compaction-threshold-size',
  MANIFEST_COMPRESSION: 'manifest.compression',
  MANIFEST_FORMAT: 'manifest.format',
  METADATA_STATS_MODE: 'metadata.stats-mode',
  METADATA_STATS_DENSE_STORE: 'metadata.stats-dense-store',
  SNAPSHOT_NUM_RETAINED_MIN: 'snapshot.num-retained.min',
  SNAPSHOT_NUM_RETAINED_MAX: 'snapshot.num-retained.max',
  SNAPSHOT_TIME_RETAINED: 'snapshot.time-retained',
  SNAPSHOT_EXPIRE_LIMIT: 'snapshot.expire.limit',
  COMMIT_MAX_RETRIES: 'commit.max-retries',
  COMMIT_TIMEOUT: 'commit.timeout',
  COMMIT_MIN_RETRY_WAIT: 'commit.min-retry-wait',
  COMMIT_MAX_RETRY_WAIT: 'commit.max-retry-wait',
  COMMIT_FORCE_COMPACT: 'commit.force-compact',
  DYNAMIC_PARTITION_OVERWRITE: 'dynamic-partition-overwrite',
  PARTITION_DEFAULT_NAME: 'partition.default-name',
  PARTITION_LEGACY_NAME: 'partition.legacy-name',
  COMPACTION_MIN_FILE_NUM: 'compaction.min.file-num',
  COMPACTION_SMALL_FILE_RATIO: 'compaction.small-file-ratio',
  COMPACTION_MAX_SIZE_AMPLIFICATION_PERCENT: 'compaction.max-size-amplification-percent',
  COMPACTION_SIZE_RATIO: 'compaction.size-ratio',
  NUM_SORTED_RUN_COMPACTION_TRIGGER: 'num-sorted-run.compaction-trigger',
  NUM_SORTED_RUN_STOP_TRIGGER: 'num-sorted-run.stop-trigger',
  NUM_LEVELS: 'num-levels',
  FULL_COMPACTION_DELTA_COMMITS: 'full-compaction.delta-commits',
  COMPACTION_FORCE_UP_LEVEL_0: 'compaction.force-up-level-0',
  DATA_FILE_PREFIX: 'data-file.prefix',
  DATA_FILE_PATH_DIRECTORY: 'data-file.path-directory',
  CHANGELOG_FILE_PREFIX: 'changelog-file.prefix',
  CHANGELOG_PRODUCER: 'changelog-producer',
  CHANGELOG_NUM_RETAINED_MIN: 'changelog.num-retained.min',
  CHANGELOG_NUM_RETAINED_MAX: 'changelog.num-retained.max',
  CHANGELOG_TIME_RETAINED: 'changelog.time-retained',
  CHANGELOG_ROW_DEDUPLICATE: 'changelog-producer.row-deduplicate',
  CHANGELOG_ROW_DEDUPLICATE_IGNORE_FIELDS: 'changelog-producer.row-deduplicate-ignore-fields',
  CONSUMER_EXPIRATION_TIME: 'consumer.expiration-time',
  CONSUMER_IGNORE_PROGRESS: 'consumer.ignore-progress',
  CONTINUOUS_DISCOVERY_INTERVAL: 'continuous.discovery-interval',
  STREAMING_READ_OVERWRITE: 'streaming-read-overwrite',
  WRITE_ONLY: 'write-only',
  DELETION_VECTORS_ENABLED: 'deletion-vectors.enabled',
  DELETION_VECTORS_BITMAP64: 'deletion-vectors.bitmap64',
  DELETION_VECTOR_INDEX_FILE_TARGET_SIZE: 'deletion-vector.index-file.target-size',
  MERGE_ENGINE: 'merge-engine',
  IGNORE_DELETE: 'ignore-delete',
  SEQUENCE_FIELD: 'sequence.field',
  SEQUENCE_FIELD_SORT_ORDER: 'sequence.field.sort-order',
  PARTIAL_UPDATE_REMOVE_RECORD_ON_DELETE: 'partial-update.remove-record-on-delete',
  AGGREGATION_REMOVE_RECORD_ON_DELETE: 'aggregation.remove-record-on-delete',
  FIELDS_DEFAULT_AGGREGATE_FUNCTION: 'fields.default-aggregate-function',
  DYNAMIC_BUCKET_TARGET_ROW_NUM: 'dynamic-bucket.target-row-num',
  DYNAMIC_BUCKET_INITIAL_BUCKETS: 'dynamic-bucket.initial-buckets',
  DYNAMIC_BUCKET_MAX_BUCKETS: 'dynamic-bucket.max-buckets',
  PARTITION_EXPIRATION_TIME: 'partition.expiration-time',
  PARTITION_EXPIRATION_CHECK_INTERVAL: 'partition.expiration-check-interval',
  PARTITION_EXPIRATION_STRATEGY: 'partition.expiration-strategy',
  PARTITION_EXPIRATION_MAX_NUM: 'partition.expiration-max-num',
  PARTITION_EXPIRATION_BATCH_SIZE: 'partition.expiration-batch-size',
  PARTITION_TIMESTAMP_FORMATTER: 'partition.timestamp-formatter',
  PARTITION_TIMESTAMP_PATTERN: 'partition.timestamp-pattern',
  END_INPUT_CHECK_PARTITION_EXPIRE: 'end-input.check-partition-expire',
  TAG_AUTOMATIC_CREATION: 'tag.automatic-creation',
  TAG_CREATION_PERIOD: 'tag.creation-period',
  TAG_CREATION_PERIOD_DURATION: 'tag.creation-period-duration',
  TAG_CREATION_DELAY: 'tag.creation-delay',
  TAG_PERIOD_FORMATTER: 'tag.period-formatter',
  TAG_NUM_RETAINED_MAX: 'tag.num-retained-max',
  TAG_DEFAULT_TIME_RETAINED: 'tag.default-time-retained',
  TAG_AUTOMATIC_COMPLETION: 'tag.automatic-completion',
  TAG_BATCH_CUSTOMIZED_NAME: 'tag.batch.customized-name',
  SINK_WATERMARK_TIME_ZONE: 'sink.watermark-time-zone',
  DISABLE_EXPLICIT_TYPE_CASTING: 'disable-explicit-type-casting',
  ALTER_COLUMN_NULL_TO_NOT_NULL_DISABLED: 'alter-column-null-to-not-null.disabled',
} as const;

/** Older spellings Paimon still reads for `ignore-delete` (its fallback keys). */
const IGNORE_DELETE_FALLBACKS = ['first-row.ignore-delete', 'deduplicate.ignore-delete', 'partial-update.ignore-delete'] as const;

/**
 * Paimon table options tidemark does not act on but that a table written by Paimon (or meant for
 * it) may carry: they are accepted silently. Misspellings of any known key get a warning.
 */
const OTHER_PAIMON_OPTIONS = [
  'type',
  'path',
  'branch',
  'primary-key',
  'partition',
  'auto-create',
  'consumer-id',
  'data-file.external-paths',
  'data-file.external-paths.strategy',
  'data-file.external-paths.specific-fs',
  'data-file.thin-mode',
  'file.compression.per.level',
  'file.format.per.level',
  'file.suffix.include.compression',
  'file.block-size',
  'manifest.delete-file-drop-stats',
  'snapshot.expire.execution-mode',
  'snapshot.clean-empty-directories',
  'snapshot.expire.clean-empty-directories',
  'snapshot.watermark-idle-timeout',
  'continuous.discovery-interval',
  'sort-engine',
  'sort-spill-threshold',
  'sort-spill-buffer-size',
  'spill-compression',
  'spill-compression.zstd-level',
  'write.compaction-skip',
  'source.split.target-size',
  'source.split.open-file-cost',
  'write-buffer-spill.max-disk-size',
  'write-buffer-for-append',
  'write-max-writers-to-spill',
  'write-manifest-cache',
  'local-sort.max-num-file-handles',
  'page-size',
  'cache-page-size',
  'compaction.optimization-interval',
  'compaction.max.file-num',
  'compaction.early-max.file-num',
  'changelog-producer.row-deduplicate',
  'changelog-producer.row-deduplicate-ignore-fields',
  'changelog-producer.lookup-wait',
  'partial-update.remove-record-on-sequence-group',
  'rowkind.field',
  'streaming.read.snapshot.delay',
  'streaming-read-overwrite',
  'streaming-read-mode',
  'stream-scan-mode',
  'read.batch-size',
  'write.batch-size',
  'dynamic-bucket.assigner-parallelism',
  'incremental-between',
  'incremental-between-scan-mode',
  'incremental-between-timestamp',
  'incremental-to-auto-tag',
  'commit.callbacks',
  'commit.user-prefix',
  'commit.force-create-snapshot',
  'local-merge-buffer-size',
  'cross-partition-upsert.index-ttl',
  'cross-partition-upsert.bootstrap-parallelism',
  'zorder.var-length-contribution',
  'file-reader-async-threshold',
  'deletion-vector.index-file.target-size',
  'delete.force-produce-changelog',
  'sort-compaction.range-strategy',
  'sort-compaction.local-sample.magnification',
  'record-level.expire-time',
  'record-level.time-field',
  'force-lookup',
  'lookup-wait',
  'delete-file.thread-num',
  'async-file-write',
  'object-location',
  'bucket-function.type',
  'full-compaction.delta-commits',
  'row-tracking.enabled',
  'data-evolution.enabled',
  'metadata.iceberg.storage',
  'changelog.num-retained.min',
  'changelog.num-retained.max',
  'changelog.time-retained',
  'changelog.precommit-compact',
  'precommit-compact',
  'merge-engine',
  'ignore-delete',
  'num-sorted-run.stop-trigger',
  'num-levels',
  'write-buffer-spillable',
  'target-file-size',
  'owner',
  'comment',
  'query-auth.enabled',
  'partition.end-input-to-done',
  'partition.mark-done-action',
  'partition.mark-done-action.custom.class',
  'partition.idle-time-to-done',
  'partition.sink-strategy',
  'compaction.total-size-threshold',
  'compaction.delete-ratio-threshold',
  'compaction.offpeak-ratio',
  'compaction.offpeak.start.hour',
  'compaction.offpeak.end.hour',
  'compaction.force-rewrite-all-files',
  'deletion-vectors.bitmap64',
  'deletion-vectors.modifiable',
  'snapshot.expire.limit',
  'tag.callbacks',
  'tag.create-success-file',
];

/**
 * Key prefixes of open-ended option families (per-field options, file system, catalog and
 * format pass-through settings, and Paimon features tidemark ignores): never warned about.
 */
const OPEN_PREFIXES = [
  'fields.',
  'fs.',
  's3.',
  'oss.',
  'hive.',
  'hadoop.',
  'dlf.',
  'jdbc.',
  'rest.',
  'metastore.',
  'client.',
  'lookup.',
  'scan.',
  'sink.',
  'log.',
  'consumer.',
  'tag.callback.',
  'orc.',
  'parquet.',
  'avro.',
  'csv.',
  'json.',
  'file-index.',
  'materialized-table.',
  'format-table.',
  'commit.callback.',
  'clustering.',
  'blob.',
  'global-index.',
  'metadata.iceberg.',
];

/** Every key tidemark knows (read or deliberately ignored). */
export const KNOWN_OPTION_KEYS: ReadonlySet<string> = new Set<string>([
  ...Object.values(OPTION),
  ...IGNORE_DELETE_FALLBACKS,
  'avro.codec',
  ...OTHER_PAIMON_OPTIONS,
]);

const KIB = 1024;
const MIB = 1024 * KIB;
/** Java Integer.MAX_VALUE, the default of `snapshot.num-retained.max`. */
export const INTEGER_MAX_VALUE = 2147483647;

/** Per-column statistics mode (`metadata.stats-mode`, `fields.<col>.stats-mode`). */
export type StatsMode =
  | { readonly kind: 'none' }
  | { readonly kind: 'counts' }
  | { readonly kind: 'full' }
  | { readonly kind: 'truncate'; readonly length: number };

/** `merge-engine` values (Paimon's `MergeEngine`). */
export const MERGE_ENGINES = ['deduplicate', 'partial-update', 'aggregation', 'first-row'] as const;
/** `partition.expiration-strategy` values tidemark implements. */
export type PartitionExpireStrategy = 'values-time' | 'update-time';

/** `tag.automatic-creation` values. */
export type TagCreationMode = 'none' | 'process-time' | 'watermark' | 'batch';

/** `tag.creation-period` values. */
export type TagCreationPeriod = 'daily' | 'hourly' | 'two-hours';

/** `tag.period-formatter` values. */
export type TagPeriodFormatter = 'with_dashes' | 'without_dashes' | 'without_dashes_and_spaces';

/** `changelog-producer` values. */
export type ChangelogProducer = 'none' | 'input' | 'full-compaction' | 'lookup';

/** Where unknown-option warnings (and other best-effort notices) go. */
export interface OptionsLogger {
  warn(message: string): void;
}

const DEFAULT_LOGGER: OptionsLogger = { warn: (m) => console.warn(`[tidemark] ${m}`) };

/**
 * Typed, defaulted view of a table's options (Paimon's `CoreOptions`). Get one with
 * {@link coreOptions} (cached per schema) or from a `TableContext`; {@link tableOptions} builds one
 * from a bare options map.
 */
export class CoreOptions {
  private readonly memo = new Map<string, unknown>();

  constructor(
    /** The options as stored in the schema (user-given values only). */
    readonly raw: Readonly<Record<string, string>>,
    /** Whether the table has a primary key (some defaults differ). */
    readonly isPrimaryKeyTable: boolean,
  ) {}

  /** The raw option value, or undefined (own properties only). */
  get(name: string): string | undefined {
    return Object.prototype.hasOwnProperty.call(this.raw, name) ? this.raw[name] : undefined;
  }

  /** Whether the option is set. */
  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  private cached<T>(key: string, compute: () => T): T {
    if (this.memo.has(key)) return this.memo.get(key) as T;
    const v = compute();
    this.memo.set(key, v);
    return v;
  }

  private str(k: string, d: string): string {
    return this.get(k) ?? d;
  }

  private int(k: string, d: number, min = Number.MIN_SAFE_INTEGER): number {
    return this.cached(k, () => {
      const v = this.get(k);
      if (v === undefined) return d;
      const n = Number(v.trim());
      if (v.trim() === '' || !Number.isInteger(n) || n < min) {
        const what = min === 0 ? 'a non-negative integer' : min === 1 ? 'a positive integer' : 'an integer';
        throw new InvalidOptionError(k, v, what, `table option '${k}' = '${v}' is not ${what}`);
      }
      return n;
    });
  }

  private optInt(k: string, min = Number.MIN_SAFE_INTEGER): number | null {
    return this.get(k) === undefined ? null : this.int(k, 0, min);
  }

  private bool(k: string, d: boolean): boolean {
    return this.cached(k, () => {
      const v = this.get(k);
      if (v === undefined) return d;
      const t = v.trim().toLowerCase();
      if (t === 'true') return true;
      if (t === 'false') return false;
      throw new InvalidOptionError(k, v, "'true' or 'false'");
    });
  }

  private size(k: string, d: number): number {
    return this.cached(k, () => {
      const v = this.get(k);
      return v === undefined ? d : parseMemorySize(v, k);
    });
  }

  private dur(k: string, d: number): number {
    return this.cached(k, () => {
      const v = this.get(k);
      return v === undefined ? d : parseDuration(v, k);
    });
  }

  private enumOf<T extends string>(k: string, d: T, values: readonly T[]): T {
    return this.cached(k, () => {
      const v = this.get(k);
      if (v === undefined) return d;
      const t = v.trim().toLowerCase();
      if (!(values as readonly string[]).includes(t)) throw new InvalidOptionError(k, v, values.map((x) => `'${x}'`).join(', '));
      return t as T;
    });
  }

  private list(k: string): string[] {
    return this.cached(k, () => {
      const v = this.get(k);
      return v === undefined || v.trim() === '' ? [] : v.split(',').map((s) => s.trim());
    });
  }

  // ---- layout -------------------------------------------------------------------------------

  /** `bucket`: -1 (bucket-unaware append / dynamic PK), -2 (postpone) or a positive count. */
  get bucket(): number {
    const n = this.int(OPTION.BUCKET, -1);
    if (n === 0 || n < -2) throw new InvalidOptionError(OPTION.BUCKET, String(this.get(OPTION.BUCKET)), 'a positive count, -1 or -2');
    return n;
  }

  /** `bucket-key` columns (empty when unset). */
  get bucketKey(): readonly string[] {
    return this.list(OPTION.BUCKET_KEY);
  }

  /** `file.format` (lower case; default parquet). */
  get fileFormat(): string {
    return this.str(OPTION.FILE_FORMAT, 'parquet').trim().toLowerCase();
  }

  /** `file.compression` (lower case; default zstd). */
  get fileCompression(): string {
    return this.str(OPTION.FILE_COMPRESSION, 'zstd').trim().toLowerCase();
  }

  /** `file.compression.zstd-level` (default 1), also used for manifests. */
  get zstdLevel(): number {
    return this.int(OPTION.FILE_COMPRESSION_ZSTD_LEVEL, 1, 0);
  }

  /** `data-file.prefix` (default `data-`). */
  get dataFilePrefix(): string {
    return this.str(OPTION.DATA_FILE_PREFIX, 'data-');
  }

  /** `changelog-file.prefix` (default `changelog-`). */
  get changelogFilePrefix(): string {
    return this.str(OPTION.CHANGELOG_FILE_PREFIX, 'changelog-');
  }

  /** `data-file.path-directory`: a directory between the table root and the partition directories, or null. */
  get dataFilePathDirectory(): string | null {
    const v = this.get(OPTION.DATA_FILE_PATH_DIRECTORY);
    return v === undefined || v.trim() === '' ? null : v.trim().replace(/^\/+|\/+$/g, '');
  }

  /** `partition.default-name`: directory value of null or blank partition values. */
  get partitionDefaultName(): string {
    return this.str(OPTION.PARTITION_DEFAULT_NAME, '__DEFAULT_PARTITION__');
  }

  /** `partition.legacy-name` (default true): partition values rendered with Java `toString()`. */
  get partitionLegacyName(): boolean {
    return this.bool(OPTION.PARTITION_LEGACY_NAME, true);
  }

  // ---- writing ------------------------------------------------------------------------------

  /** `target-file-size` in bytes: 256 MiB for append tables, 128 MiB for primary-key tables. */
  get targetFileSize(): number {
    return this.size(OPTION.TARGET_FILE_SIZE, this.isPrimaryKeyTable ? 128 * MIB : 256 * MIB);
  }

  /** `write-buffer-size` in bytes (256 MiB): the writer's memory budget for buffered rows. */
  get writeBufferSize(): number {
    return this.size(OPTION.WRITE_BUFFER_SIZE, 256 * MIB);
  }

  /**
   * `lookup.cache-max-memory-size` in bytes (256 MiB): decoded rows of data files that key lookups
   * on a long-lived table keep in memory.
   */
  get lookupCacheMaxMemorySize(): number {
    return this.size(OPTION.LOOKUP_CACHE_MAX_MEMORY_SIZE, 256 * MIB);
  }

  /** `file-index.bloom-filter.columns`: columns whose data-file index holds a bloom filter (none by default). */
  get fileIndexBloomFilterColumns(): string[] {
    return this.list(OPTION.FILE_INDEX_BLOOM_FILTER_COLUMNS);
  }

  /** `file-index.in-manifest-threshold` in bytes (500 B): smaller indexes are embedded in the manifest, larger ones are a sidecar file. */
  get fileIndexInManifestThreshold(): number {
    return this.size(OPTION.FILE_INDEX_IN_MANIFEST_THRESHOLD, 500);
  }

  /** `file-index.read.enabled` (default true): reads skip data files their index rules out. */
  get fileIndexReadEnabled(): boolean {
    return this.bool(OPTION.FILE_INDEX_READ_ENABLED, true);
  }

  /** `write-buffer-spillable`, or null when unset (Paimon then spills on object stores and in batch). */
  get writeBufferSpillable(): boolean | null {
    return this.get(OPTION.WRITE_BUFFER_SPILLABLE) === undefined ? null : this.bool(OPTION.WRITE_BUFFER_SPILLABLE, false);
  }

  /** `disable-explicit-type-casting` (default false): a column type change must be an implicit (lossless) cast. */
  get disableExplicitTypeCasting(): boolean {
    return this.bool(OPTION.DISABLE_EXPLICIT_TYPE_CASTING, false);
  }

  /** `alter-column-null-to-not-null.disabled` (default true): a nullable column cannot become NOT NULL. */
  get alterColumnNullToNotNullDisabled(): boolean {
    return this.bool(OPTION.ALTER_COLUMN_NULL_TO_NOT_NULL_DISABLED, true);
  }

  /** `write-only` (default false): commits neither compact nor expire snapshots. */
  get writeOnly(): boolean {
    return this.bool(OPTION.WRITE_ONLY, false);
  }

  /** `metadata.stats-mode` (default truncate(16)). */
  get statsMode(): StatsMode {
    return this.cached(OPTION.METADATA_STATS_MODE, () =>
      parseStatsMode(this.str(OPTION.METADATA_STATS_MODE, 'truncate(16)'), OPTION.METADATA_STATS_MODE),
    );
  }

  /** `metadata.stats-dense-store` (default true). */
  get statsDenseStore(): boolean {
    return this.bool(OPTION.METADATA_STATS_DENSE_STORE, true);
  }

  /** Stats mode of one column: `fields.<col>.stats-mode`, else {@link statsMode}. */
  statsModeOf(column: string): StatsMode {
    const key = `fields.${column}.stats-mode`;
    const v = this.get(key);
    return v === undefined ? this.statsMode : parseStatsMode(v, key);
  }

  // ---- primary-key tables -------------------------------------------------------------------

  /** `merge-engine` (lower case; default deduplicate). Unknown engines are rejected by the reader. */
  get mergeEngine(): string {
    return this.str(OPTION.MERGE_ENGINE, 'deduplicate').trim().toLowerCase();
  }

  /** `ignore-delete`, or one of its older spellings (`first-row.`, `deduplicate.`, `partial-update.ignore-delete`). */
  get ignoreDelete(): boolean {
    return [OPTION.IGNORE_DELETE, ...IGNORE_DELETE_FALLBACKS].some((k) => this.bool(k, false));
  }

  /** `partial-update.remove-record-on-delete` (default false). */
  get partialUpdateRemoveRecordOnDelete(): boolean {
    return this.bool(OPTION.PARTIAL_UPDATE_REMOVE_RECORD_ON_DELETE, false);
  }

  /** `partial-update.remove-record-on-sequence-group`: sequence fields whose group's delete removes the record. */
  get partialUpdateRemoveRecordOnSequenceGroup(): readonly string[] {
    return this.list('partial-update.remove-record-on-sequence-group');
  }

  /** `aggregation.remove-record-on-delete` (default false). */
  get aggregationRemoveRecordOnDelete(): boolean {
    return this.bool(OPTION.AGGREGATION_REMOVE_RECORD_ON_DELETE, false);
  }

  /** `sequence.field` columns (empty when unset). */
  get sequenceField(): readonly string[] {
    return this.list(OPTION.SEQUENCE_FIELD);
  }

  /** `sequence.field.sort-order` (default ascending). */
  get sequenceFieldSortOrder(): 'ascending' | 'descending' {
    return this.enumOf(OPTION.SEQUENCE_FIELD_SORT_ORDER, 'ascending', ['ascending', 'descending']);
  }

  /** `fields.default-aggregate-function` (lower case), or null. */
  get fieldsDefaultAggregateFunction(): string | null {
    return this.get(OPTION.FIELDS_DEFAULT_AGGREGATE_FUNCTION)?.trim().toLowerCase() ?? null;
  }

  /** `fields.<field>.aggregate-function` (lower case), or null. */
  fieldAggregateFunction(field: string): string | null {
    return this.get(`fields.${field}.aggregate-function`)?.trim().toLowerCase() ?? null;
  }

  /** `fields.<field>.ignore-retract` (default false). */
  fieldIgnoreRetract(field: string): boolean {
    return this.bool(`fields.${field}.ignore-retract`, false);
  }

  /** `fields.<field>.distinct` (default false). */
  fieldDistinct(field: string): boolean {
    return this.bool(`fields.${field}.distinct`, false);
  }

  /** `fields.<field>.list-agg-delimiter` (default `,`). */
  fieldListAggDelimiter(field: string): string {
    return this.str(`fields.${field}.list-agg-delimiter`, ',');
  }

  /** Keys of the form `fields.<f>.sequence-group` that are set (sequence groups). */
  get sequenceGroupKeys(): readonly string[] {
    return this.fieldKeysEndingWith('.sequence-group');
  }

  /** Keys of the form `fields.<f>.aggregate-function` that are set. */
  get aggregateFunctionKeys(): readonly string[] {
    return this.fieldKeysEndingWith('.aggregate-function');
  }

  private fieldKeysEndingWith(suffix: string): string[] {
    return Object.keys(this.raw).filter(
      (k) => k.startsWith('fields.') && k.endsWith(suffix) && k !== OPTION.FIELDS_DEFAULT_AGGREGATE_FUNCTION,
    );
  }

  /** `deletion-vectors.enabled` (default false). */
  get deletionVectorsEnabled(): boolean {
    return this.bool(OPTION.DELETION_VECTORS_ENABLED, false);
  }

  /** `deletion-vectors.bitmap64` (default false): write 64-bit (Iceberg-compatible) vectors. */
  get deletionVectorsBitmap64(): boolean {
    return this.bool(OPTION.DELETION_VECTORS_BITMAP64, false);
  }

  /**
   * `deletion-vector.index-file.target-size` (default 2 MB): DV index files of bucket-unaware
   * append tables roll at this size (buckets keep one file each, as in Java).
   */
  get deletionVectorIndexFileTargetSize(): number {
    return this.size(OPTION.DELETION_VECTOR_INDEX_FILE_TARGET_SIZE, 2 * MIB);
  }

  /** `changelog-producer` (default none). */
  get changelogProducer(): ChangelogProducer {
    return this.enumOf<ChangelogProducer>(OPTION.CHANGELOG_PRODUCER, 'none', ['none', 'input', 'full-compaction', 'lookup']);
  }

  /** `num-sorted-run.compaction-trigger` (default 5): sorted runs of a bucket that trigger a compaction. */
  get numSortedRunCompactionTrigger(): number {
    return this.int(OPTION.NUM_SORTED_RUN_COMPACTION_TRIGGER, 5, 1);
  }

  /** `num-sorted-run.stop-trigger` (default compaction trigger + 3): sorted runs at which writes wait for compaction. */
  get numSortedRunStopTrigger(): number {
    const trigger = this.numSortedRunCompactionTrigger;
    return Math.max(trigger, this.int(OPTION.NUM_SORTED_RUN_STOP_TRIGGER, trigger + 3, 1));
  }

  /** `num-levels` (default compaction trigger + 1): LSM levels of a bucket, 0 .. n-1. */
  get numLevels(): number {
    return this.int(OPTION.NUM_LEVELS, this.numSortedRunCompactionTrigger + 1, 2);
  }

  /** `compaction.max-size-amplification-percent` (default 200). */
  get compactionMaxSizeAmplificationPercent(): number {
    return this.int(OPTION.COMPACTION_MAX_SIZE_AMPLIFICATION_PERCENT, 200, 0);
  }

  /** `compaction.size-ratio` (default 1, a percentage). */
  get compactionSizeRatio(): number {
    return this.int(OPTION.COMPACTION_SIZE_RATIO, 1, 0);
  }

  /** `compaction.min.file-num` (default 5): append compaction picks at least this many small files. */
  get compactionMinFileNum(): number {
    return this.int(OPTION.COMPACTION_MIN_FILE_NUM, 5, 1);
  }

  /** `compaction.small-file-ratio` (default 0.7): files below `target-file-size` × this are small. */
  get compactionSmallFileRatio(): number {
    return this.cached(OPTION.COMPACTION_SMALL_FILE_RATIO, () => {
      const v = this.get(OPTION.COMPACTION_SMALL_FILE_RATIO);
      if (v === undefined) return 0.7;
      const n = v.trim() === '' ? NaN : Number(v.trim());
      if (!Number.isFinite(n) || n <= 0) {
        throw new InvalidOptionError(
          OPTION.COMPACTION_SMALL_FILE_RATIO,
          v,
          'a positive number',
          `table option '${OPTION.COMPACTION_SMALL_FILE_RATIO}' = '${v}' is not a positive number`,
        );
      }
      return n;
    });
  }

  /** `full-compaction.delta-commits`, or null when unset. */
  get fullCompactionDeltaCommits(): number | null {
    return this.optInt(OPTION.FULL_COMPACTION_DELTA_COMMITS, 1);
  }

  /** `compaction.force-up-level-0` (default false): writers compact level-0 files upward after every flush. */
  get compactionForceUpLevel0(): boolean {
    return this.bool(OPTION.COMPACTION_FORCE_UP_LEVEL_0, false);
  }

  /** `commit.force-compact` (default false). */
  get commitForceCompact(): boolean {
    return this.bool(OPTION.COMMIT_FORCE_COMPACT, false);
  }

  /** `dynamic-bucket.target-row-num` (default 2,000,000): rows per bucket of a dynamic-bucket table. */
  get dynamicBucketTargetRowNum(): number {
    return this.int(OPTION.DYNAMIC_BUCKET_TARGET_ROW_NUM, 2_000_000, 1);
  }

  /** `dynamic-bucket.initial-buckets`, or null when unset. */
  get dynamicBucketInitialBuckets(): number | null {
    return this.optInt(OPTION.DYNAMIC_BUCKET_INITIAL_BUCKETS, 1);
  }

  /** `dynamic-bucket.max-buckets` (default -1 = unlimited): highest bucket count per partition of a dynamic-bucket table. */
  get dynamicBucketMaxBuckets(): number {
    const n = this.int(OPTION.DYNAMIC_BUCKET_MAX_BUCKETS, -1, -1);
    if (n === 0) throw new InvalidOptionError(OPTION.DYNAMIC_BUCKET_MAX_BUCKETS, '0', '-1 (unlimited) or a positive integer');
    return n;
  }

  // ---- commit, manifests, expiration --------------------------------------------------------

  get manifestTargetFileSize(): number {
    return this.size(OPTION.MANIFEST_TARGET_FILE_SIZE, 8 * MIB);
  }

  get manifestMergeMinCount(): number {
    return this.int(OPTION.MANIFEST_MERGE_MIN_COUNT, 30, 0);
  }

  get manifestFullCompactionThresholdSize(): number {
    return this.size(OPTION.MANIFEST_FULL_COMPACTION_THRESHOLD_SIZE, 16 * MIB);
  }

  /** `manifest.format` (lower case; default avro). Manifests are read in either format, written only as Avro. */
  get manifestFormat(): string {
    return this.str(OPTION.MANIFEST_FORMAT, 'avro').trim().toLowerCase();
  }

  /** Avro codec of manifests: `avro.codec`, else `manifest.compression` (default zstd → `zstandard`). */
  get manifestCodec(): AvroCodecName {
    return this.cached('manifestCodec', () => {
      const key = this.has('avro.codec') ? 'avro.codec' : OPTION.MANIFEST_COMPRESSION;
      return avroCodecFor(this.str(key, 'zstd'), key);
    });
  }

  get snapshotNumRetainedMin(): number {
    return this.int(OPTION.SNAPSHOT_NUM_RETAINED_MIN, 10);
  }

  get snapshotNumRetainedMax(): number {
    return this.int(OPTION.SNAPSHOT_NUM_RETAINED_MAX, INTEGER_MAX_VALUE);
  }

  /** `snapshot.time-retained` in milliseconds (1 h). */
  get snapshotTimeRetainedMs(): number {
    return this.dur(OPTION.SNAPSHOT_TIME_RETAINED, 3_600_000);
  }

  /** `changelog.num-retained.min` when set (default: `snapshot.num-retained.min`). */
  get changelogNumRetainedMin(): number | null {
    return this.optInt(OPTION.CHANGELOG_NUM_RETAINED_MIN, 1);
  }

  /** `changelog.num-retained.max` when set (default: `snapshot.num-retained.max`). */
  get changelogNumRetainedMax(): number | null {
    return this.optInt(OPTION.CHANGELOG_NUM_RETAINED_MAX, 1);
  }

  /** `changelog.time-retained` in milliseconds when set (default: `snapshot.time-retained`). */
  get changelogTimeRetainedMs(): number | null {
    return this.get(OPTION.CHANGELOG_TIME_RETAINED) === undefined ? null : this.dur(OPTION.CHANGELOG_TIME_RETAINED, 0);
  }

  /** `consumer.expiration-time` in milliseconds: consumers not updated for this long are removed by expiration; null = never. */
  get consumerExpirationTimeMs(): number | null {
    return this.get(OPTION.CONSUMER_EXPIRATION_TIME) === undefined ? null : this.dur(OPTION.CONSUMER_EXPIRATION_TIME, 0);
  }

  /** `consumer.ignore-progress` (default false): a streaming read with a consumer id starts where asked, not at the consumer's progress. */
  get consumerIgnoreProgress(): boolean {
    return this.bool(OPTION.CONSUMER_IGNORE_PROGRESS, false);
  }

  /** `continuous.discovery-interval` in milliseconds (10 s): how often a streaming read looks for new snapshots. */
  get continuousDiscoveryIntervalMs(): number {
    return this.dur(OPTION.CONTINUOUS_DISCOVERY_INTERVAL, 10_000);
  }

  /**
   * `changelog-producer.row-deduplicate` (default false): the lookup and full-compaction producers
   * leave out a -U/+U pair whose before and after values are equal.
   */
  get changelogRowDeduplicate(): boolean {
    return this.bool(OPTION.CHANGELOG_ROW_DEDUPLICATE, false);
  }

  /** `changelog-producer.row-deduplicate-ignore-fields`: columns not compared by the row deduplication. */
  get changelogRowDeduplicateIgnoreFields(): string[] {
    return this.list(OPTION.CHANGELOG_ROW_DEDUPLICATE_IGNORE_FIELDS);
  }

  /** `streaming-read-overwrite` (default false): streaming reads include the files OVERWRITE snapshots add. */
  get streamingReadOverwrite(): boolean {
    return this.bool(OPTION.STREAMING_READ_OVERWRITE, false);
  }

  get snapshotExpireLimit(): number {
    return this.int(OPTION.SNAPSHOT_EXPIRE_LIMIT, 50);
  }

  get commitMaxRetries(): number {
    return this.int(OPTION.COMMIT_MAX_RETRIES, 10, 0);
  }

  /** `commit.timeout` in milliseconds; null = no timeout. */
  get commitTimeoutMs(): number | null {
    return this.get(OPTION.COMMIT_TIMEOUT) === undefined ? null : this.dur(OPTION.COMMIT_TIMEOUT, 0);
  }

  get commitMinRetryWaitMs(): number {
    return this.dur(OPTION.COMMIT_MIN_RETRY_WAIT, 10);
  }

  get commitMaxRetryWaitMs(): number {
    return this.dur(OPTION.COMMIT_MAX_RETRY_WAIT, 10_000);
  }

  get dynamicPartitionOverwrite(): boolean {
    return this.bool(OPTION.DYNAMIC_PARTITION_OVERWRITE, true);
  }

  // ---- partition expiration ----------------------------------------------------------------

  /** `partition.expiration-time` in milliseconds: partitions older than this are dropped; null = never. */
  get partitionExpirationTimeMs(): number | null {
    return this.optDur(OPTION.PARTITION_EXPIRATION_TIME);
  }

  /** `partition.expiration-check-interval` in milliseconds (1 h): how often a committer looks for expired partitions. */
  get partitionExpirationCheckIntervalMs(): number {
    return this.dur(OPTION.PARTITION_EXPIRATION_CHECK_INTERVAL, 3_600_000);
  }

  /** `partition.expiration-strategy` (default values-time): partition time from the values, or from the last file creation. */
  get partitionExpirationStrategy(): PartitionExpireStrategy {
    if (this.get(OPTION.PARTITION_EXPIRATION_STRATEGY)?.trim().toLowerCase() === 'custom') {
      throw new InvalidOptionError(
        OPTION.PARTITION_EXPIRATION_STRATEGY,
        'custom',
        "'values-time' or 'update-time'",
        "table option 'partition.expiration-strategy' = 'custom' needs a Java strategy class, which tidemark cannot load: use 'values-time' or 'update-time'",
      );
    }
    return this.enumOf<PartitionExpireStrategy>(OPTION.PARTITION_EXPIRATION_STRATEGY, 'values-time', ['values-time', 'update-time']);
  }

  /** `partition.expiration-max-num` (default 100): most partitions one expiration drops. */
  get partitionExpirationMaxNum(): number {
    return this.int(OPTION.PARTITION_EXPIRATION_MAX_NUM, 100, 1);
  }

  /** `partition.expiration-batch-size`: partitions per drop commit, or null for one commit. */
  get partitionExpirationBatchSize(): number | null {
    return this.optInt(OPTION.PARTITION_EXPIRATION_BATCH_SIZE, 1);
  }

  /**
   * `partition.timestamp-formatter` (a Java `DateTimeFormatter` pattern), compiled; null when
   * unset (Java's default `yyyy-MM-dd[ HH:mm:ss]` parsing then applies).
   */
  get partitionTimestampFormatter(): DatePattern | null {
    return this.cached(OPTION.PARTITION_TIMESTAMP_FORMATTER, () => {
      const v = this.get(OPTION.PARTITION_TIMESTAMP_FORMATTER);
      if (v === undefined) return null;
      try {
        return compileDatePattern(v);
      } catch (e) {
        throw new InvalidOptionError(
          OPTION.PARTITION_TIMESTAMP_FORMATTER,
          v,
          'a Java DateTimeFormatter pattern',
          `table option '${OPTION.PARTITION_TIMESTAMP_FORMATTER}' = '${v}' is not a usable date pattern: ${(e as Error).message}`,
        );
      }
    });
  }

  /** `partition.timestamp-pattern` (`$dt $hour:00:00`), or null to read the first partition value. */
  get partitionTimestampPattern(): string | null {
    return this.get(OPTION.PARTITION_TIMESTAMP_PATTERN) ?? null;
  }

  /** `end-input.check-partition-expire` (default false): a batch commit (identifier Long.MAX) checks for expired partitions at once. */
  get endInputCheckPartitionExpire(): boolean {
    return this.bool(OPTION.END_INPUT_CHECK_PARTITION_EXPIRE, false);
  }

  // ---- automatic tags ------------------------------------------------------------------------

  /** `tag.automatic-creation` (default none). */
  get tagAutomaticCreation(): TagCreationMode {
    return this.enumOf<TagCreationMode>(OPTION.TAG_AUTOMATIC_CREATION, 'none', ['none', 'process-time', 'watermark', 'batch']);
  }

  /** `tag.creation-period` (default daily). */
  get tagCreationPeriod(): TagCreationPeriod {
    return this.enumOf<TagCreationPeriod>(OPTION.TAG_CREATION_PERIOD, 'daily', ['daily', 'hourly', 'two-hours']);
  }

  /** `tag.creation-period-duration` in milliseconds, or null; when set it replaces `tag.creation-period`. */
  get tagCreationPeriodDurationMs(): number | null {
    const ms = this.optDur(OPTION.TAG_CREATION_PERIOD_DURATION);
    if (ms !== null && ms <= 0)
      throw new InvalidOptionError(
        OPTION.TAG_CREATION_PERIOD_DURATION,
        String(this.get(OPTION.TAG_CREATION_PERIOD_DURATION)),
        'a positive duration',
      );
    return ms;
  }

  /** Length of one tag period in milliseconds (`tag.creation-period-duration`, else `tag.creation-period`). */
  get tagPeriodMs(): number {
    return this.tagCreationPeriodDurationMs ?? { daily: 86_400_000, hourly: 3_600_000, 'two-hours': 7_200_000 }[this.tagCreationPeriod];
  }

  /**
   * `tag.creation-delay` in milliseconds (default 0): how long after a period ends its tag waits
   * for late data. Must be shorter than one period, as in Paimon.
   */
  get tagCreationDelayMs(): number {
    const delay = this.dur(OPTION.TAG_CREATION_DELAY, 0);
    if (this.tagAutomaticCreation !== 'none' && this.tagAutomaticCreation !== 'batch' && delay >= this.tagPeriodMs) {
      throw new InvalidOptionError(
        OPTION.TAG_CREATION_DELAY,
        String(this.get(OPTION.TAG_CREATION_DELAY)),
        'a delay shorter than one tag period',
        `table option '${OPTION.TAG_CREATION_DELAY}' = '${String(this.get(OPTION.TAG_CREATION_DELAY))}' must be shorter than one tag period (${this.tagPeriodMs / 60_000} min), as Paimon requires`,
      );
    }
    return delay;
  }

  /** `tag.period-formatter` (default with_dashes): `2024-03-05 10`, `20240305 10` or `2024030510`. */
  get tagPeriodFormatter(): TagPeriodFormatter {
    return this.enumOf<TagPeriodFormatter>(OPTION.TAG_PERIOD_FORMATTER, 'with_dashes', [
      'with_dashes',
      'without_dashes',
      'without_dashes_and_spaces',
    ]);
  }

  /** `tag.num-retained-max`: most automatic tags kept (batch mode: most tags), or null for no limit. */
  get tagNumRetainedMax(): number | null {
    return this.optInt(OPTION.TAG_NUM_RETAINED_MAX, 1);
  }

  /** `tag.default-time-retained` in milliseconds: retention written into new tags (automatic and manual), or null. */
  get tagDefaultTimeRetainedMs(): number | null {
    return this.optDur(OPTION.TAG_DEFAULT_TIME_RETAINED);
  }

  /** `tag.automatic-completion` (default false): create the tags of periods without a commit too. */
  get tagAutomaticCompletion(): boolean {
    return this.bool(OPTION.TAG_AUTOMATIC_COMPLETION, false);
  }

  /** `tag.batch.customized-name`: the tag name of `batch` mode instead of `batch-write-<date>`, or null. */
  get tagBatchCustomizedName(): string | null {
    const v = this.get(OPTION.TAG_BATCH_CUSTOMIZED_NAME);
    return v === undefined || v.trim() === '' ? null : v;
  }

  /** `sink.watermark-time-zone` (default UTC): the zone watermarks are read in for `watermark` tags. */
  get sinkWatermarkTimeZone(): string {
    return this.cached(OPTION.SINK_WATERMARK_TIME_ZONE, () => {
      const v = this.str(OPTION.SINK_WATERMARK_TIME_ZONE, 'UTC').trim();
      try {
        new Intl.DateTimeFormat('en-US', { timeZone: v });
      } catch {
        throw new InvalidOptionError(OPTION.SINK_WATERMARK_TIME_ZONE, v, "a time zone such as 'UTC' or 'Europe/Berlin'");
      }
      return v;
    });
  }

  private optDur(k: string): number | null {
    return this.get(k) === undefined ? null : this.dur(k, 0);
  }

  /**
   * Parses the options checked when a table is created or altered (layout, sizes, commit and
   * expiration settings), so that a bad value is refused before it is stored.
   *
   * @throws InvalidOptionError naming the first bad option.
   */
  validate(): void {
    void [
      this.bucket,
      this.targetFileSize,
      this.writeBufferSize,
      this.manifestTargetFileSize,
      this.manifestMergeMinCount,
      this.manifestFullCompactionThresholdSize,
      this.statsMode,
      this.statsDenseStore,
      this.snapshotNumRetainedMin,
      this.snapshotNumRetainedMax,
      this.snapshotTimeRetainedMs,
      this.snapshotExpireLimit,
      this.commitMaxRetries,
      this.commitTimeoutMs,
      this.commitMinRetryWaitMs,
      this.commitMaxRetryWaitMs,
      this.dynamicPartitionOverwrite,
      this.partitionLegacyName,
      this.compactionMinFileNum,
      this.changelogProducer,
      this.ignoreDelete,
      this.sequenceFieldSortOrder,
      this.numSortedRunCompactionTrigger,
      this.numSortedRunStopTrigger,
      this.numLevels,
      this.fullCompactionDeltaCommits,
      this.deletionVectorsEnabled,
      this.deletionVectorsBitmap64,
      this.writeOnly,
      this.changelogNumRetainedMin,
      this.changelogNumRetainedMax,
      this.changelogTimeRetainedMs,
      this.partitionExpirationTimeMs,
      this.partitionExpirationCheckIntervalMs,
      this.partitionExpirationStrategy,
      this.partitionExpirationMaxNum,
      this.partitionExpirationBatchSize,
      this.partitionTimestampFormatter,
      this.endInputCheckPartitionExpire,
      this.tagAutomaticCreation,
      this.tagPeriodMs,
      this.tagCreationDelayMs,
      this.tagPeriodFormatter,
      this.tagNumRetainedMax,
      this.tagDefaultTimeRetainedMs,
      this.tagAutomaticCompletion,
      this.sinkWatermarkTimeZone,
      this.fileIndexInManifestThreshold,
      this.fileIndexReadEnabled,
    ];
    this.checkMergeEngine();
    this.checkRetentionBounds();
    this.checkPaimonPairs();
  }

  /** The merge engine is one tidemark knows. */
  private checkMergeEngine(): void {
    const engine = this.mergeEngine;
    if (!(MERGE_ENGINES as readonly string[]).includes(engine)) {
      throw new InvalidOptionError(
        OPTION.MERGE_ENGINE,
        this.get(OPTION.MERGE_ENGINE) ?? engine,
        MERGE_ENGINES.map((e) => `'${e}'`).join(', '),
      );
    }
  }

  /** Snapshot and changelog retention bounds. */
  private checkRetentionBounds(): void {
    // Paimon's SchemaValidation: at least one snapshot is kept, and the bounds are ordered.
    const min = this.snapshotNumRetainedMin;
    if (min < 1) {
      throw new InvalidOptionError(
        OPTION.SNAPSHOT_NUM_RETAINED_MIN,
        String(min),
        'at least 1',
        `table option '${OPTION.SNAPSHOT_NUM_RETAINED_MIN}' = '${min}' must be at least 1`,
      );
    }
    const max = this.snapshotNumRetainedMax;
    if (min > max) {
      throw new InvalidOptionError(
        OPTION.SNAPSHOT_NUM_RETAINED_MIN,
        String(min),
        `at most '${OPTION.SNAPSHOT_NUM_RETAINED_MAX}'`,
        `table option '${OPTION.SNAPSHOT_NUM_RETAINED_MIN}' = '${min}' must not be larger than '${OPTION.SNAPSHOT_NUM_RETAINED_MAX}' = '${max}'`,
      );
    }
    const changelogMin = this.changelogNumRetainedMin ?? min;
    const changelogMax = this.changelogNumRetainedMax ?? max;
    if (changelogMin > changelogMax) {
      throw new InvalidOptionError(
        OPTION.CHANGELOG_NUM_RETAINED_MIN,
        String(changelogMin),
        `at most '${OPTION.CHANGELOG_NUM_RETAINED_MAX}'`,
        `table option '${OPTION.CHANGELOG_NUM_RETAINED_MIN}' (${changelogMin}) must not be larger than '${OPTION.CHANGELOG_NUM_RETAINED_MAX}' (${changelogMax})`,
      );
    }
  }

  /** Option pairs Paimon refuses. */
  private checkPaimonPairs(): void {
    // Paimon's schema validation refuses these pairs: a table created here must open there.
    if (this.deletionVectorsEnabled) {
      const producer = this.changelogProducer;
      if (producer === 'full-compaction') {
        throw new InvalidOptionError(
          OPTION.CHANGELOG_PRODUCER,
          producer,
          "'none', 'input' or 'lookup' with deletion vectors",
          "table option 'changelog-producer' = 'full-compaction' cannot be combined with 'deletion-vectors.enabled' = 'true' " +
            "(as in Paimon): use 'lookup', which produces the same changelog on every compaction, or turn deletion vectors off",
        );
      }
      if (this.mergeEngine === 'first-row') {
        throw new InvalidOptionError(
          OPTION.MERGE_ENGINE,
          'first-row',
          'another merge engine with deletion vectors',
          "table option 'merge-engine' = 'first-row' cannot be combined with 'deletion-vectors.enabled' = 'true' (as in Paimon): " +
            'a first-row table never replaces a row, so it has nothing to mark; turn deletion vectors off',
        );
      }
    }
  }

  /**
   * Keys that are neither known to tidemark nor in an open-ended family (`fields.`, `fs.`, `s3.`,
   * ...), each with the nearest known key when one is close (likely a misspelling).
   */
  unknownKeys(): Array<{ key: string; suggestion: string | null }> {
    const out: Array<{ key: string; suggestion: string | null }> = [];
    for (const key of Object.keys(this.raw)) {
      if (KNOWN_OPTION_KEYS.has(key) || OPEN_PREFIXES.some((p) => key.startsWith(p))) continue;
      out.push({ key, suggestion: nearestKnownKey(key) });
    }
    return out;
  }
}

/** Defaulted options of a schema (or of a raw options map with the table kind given). Not cached. */
export function tableOptions(schema: Pick<TableSchema, 'options' | 'primaryKeys'>): CoreOptions {
  return new CoreOptions(schema.options, schema.primaryKeys.length > 0);
}

const perSchema = new WeakMap<object, CoreOptions>();

/** The options of `schema`, created once per schema object (values are parsed on first use). */
export function coreOptions(schema: Pick<TableSchema, 'options' | 'primaryKeys'>): CoreOptions {
  let o = perSchema.get(schema);
  if (o === undefined) {
    o = tableOptions(schema);
    perSchema.set(schema, o);
  }
  return o;
}

const warned = new Set<string>();

/**
 * Warns through `logger` about each unknown option key of `options` (naming the nearest known key),
 * once per `scope` (a table location and schema id) and key in this process.
 */
export function warnUnknownOptions(options: CoreOptions, scope: string, logger: OptionsLogger = DEFAULT_LOGGER): void {
  for (const { key, suggestion } of options.unknownKeys()) {
    const id = `${scope}\u0000${key}`;
    if (warned.has(id)) continue;
    if (warned.size > 10_000) warned.clear();
    warned.add(id);
    logger.warn(`${scope}: unknown table option '${key}'${suggestion !== null ? ` (did you mean '${suggestion}'?)` : ''} is ignored`);
  }
}

/** The known key nearest to `key` by edit distance, when close enough to be a likely misspelling. */
export function nearestKnownKey(key: string): string | null {
  let best: string | null = null;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const known of KNOWN_OPTION_KEYS) {
    const d = editDistance(key, known);
    if (d < bestDistance) {
      bestDistance = d;
      best = known;
    }
  }
  return best !== null && bestDistance <= Math.max(2, Math.floor(key.length / 4)) ? best : null;
}

/** Levenshtein distance of two strings (for "did you mean" suggestions). */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length]!;
}

/** Avro codec of a Paimon compression name (`zstd`, `snappy`, `deflate`, `none`). */
export function avroCodecFor(compression: string, option: string = OPTION.MANIFEST_COMPRESSION): AvroCodecName {
  switch (compression.trim().toLowerCase()) {
    case 'zstd':
    case 'zstandard':
      return 'zstandard';
    case 'none':
    case 'null':
    case 'uncompressed':
      return 'null';
    case 'deflate':
      return 'deflate';
    case 'snappy':
      return 'snappy';
    default:
      throw new InvalidOptionError(option, compression, 'zstd, snappy, deflate or none');
  }
}

/** Parses `none`, `counts`, `full` or `truncate(<n>)` (case-insensitive). */
export function parseStatsMode(value: string, option = OPTION.METADATA_STATS_MODE as string): StatsMode {
  const v = value.trim().toLowerCase();
  if (v === 'none' || v === 'counts' || v === 'full') return { kind: v };
  const m = /^truncate\((\d+)\)$/.exec(v);
  if (m) return { kind: 'truncate', length: Number(m[1]) };
  throw new InvalidOptionError(option, value, "'none', 'counts', 'full' or 'truncate(<n>)'");
}

const SIZE_UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  bytes: 1,
  k: KIB,
  kb: KIB,
  kibibytes: KIB,
  m: MIB,
  mb: MIB,
  mebibytes: MIB,
  g: 1024 * MIB,
  gb: 1024 * MIB,
  gibibytes: 1024 * MIB,
  t: 1024 * 1024 * MIB,
  tb: 1024 * 1024 * MIB,
  tebibytes: 1024 * 1024 * MIB,
};

/** Paimon `MemorySize.parse`: `<number> [b|kb|mb|gb|tb]` (binary units, case-insensitive). */
export function parseMemorySize(value: string, option = 'memory size'): number {
  const m = /^\s*(\d+)\s*([a-zA-Z]*)\s*$/.exec(value);
  const unit = m ? SIZE_UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined) throw new InvalidOptionError(option, value, "a size such as '128 mb', '8 kb' or '1024'");
  return Number(m[1]) * unit;
}

const DURATION_UNITS: Record<string, number> = {
  '': 1,
  ms: 1,
  milli: 1,
  millis: 1,
  millisecond: 1,
  milliseconds: 1,
  s: 1000,
  sec: 1000,
  secs: 1000,
  second: 1000,
  seconds: 1000,
  min: 60_000,
  m: 60_000,
  minute: 60_000,
  minutes: 60_000,
  h: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  days: 86_400_000,
};

/** Paimon `TimeUtils.parseDuration` in milliseconds: `10 ms`, `10 s`, `1 h`, `30 min`, `2 d` (bare number = ms). */
export function parseDuration(value: string, option = 'duration'): number {
  const m = /^\s*(\d+)\s*([a-zA-Z]*)\s*$/.exec(value);
  const unit = m ? DURATION_UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined) throw new InvalidOptionError(option, value, "a duration such as '10 ms', '10 s' or '1 h'");
  return Number(m[1]) * unit;
}
