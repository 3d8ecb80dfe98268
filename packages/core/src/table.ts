/**
 * `Table`: one Paimon table opened from its directory (local path, `file://`, `s3://`,
 * `memory://`), with its schema, snapshots, tags and the read API.
 *
 * ```ts
 * const table = await openTable('s3://bucket/wh/db.db/t');
 * for await (const batch of table.newRead({ columns: ['id', 'v'], where: 'id > 10' }).batches()) …
 * const t = await table.newRead({ snapshotId: 3 }).toArrowTable();
 * ```
 */
import * as arrow from 'apache-arrow';
import { resolveFileIO, type FileIO, type ResolveFileIOOptions } from '@tidemark/storage';
import { INDEX_TYPE_DELETION_VECTORS, type DataFileMeta, type IndexManifestEntry, type Tag, type TableSchema } from '@tidemark/format';
import type { CommitMessage, Committable } from './commit-message.js';
import type { CommitResult } from './commit/file-store-commit.js';
import { sharedCommitKnowledge, type LivePlan } from './commit/commit-knowledge.js';
import { snapshotIndexEntries } from './commit/index-changes.js';
import { BucketDvMaintainer } from './deletion-vectors/bucket-dv-maintainer.js';
import { rollbackTo, type RollbackOptions, type RollbackResult } from './rollback.js';
import { createTag, deleteTag, listTags, tagDurationOf, type CreateTagOptions } from './tags.js';
import { listPartitionEntries, type PartitionEntry } from './partition/partition-entries.js';
import { dropPartitions, type DropPartitionsOptions, type DropPartitionsSummary } from './partition/drop-partitions.js';
import { expirePartitions, type ExpirePartitionsOptions, type ExpirePartitionsSummary } from './partition/partition-expire.js';
import { TableWrite, type CompactManagerContext, type RowObject, type TableWriteOptions, type WriteInput } from './write/table-write.js';
import { writerCompactManager } from './compact/writer-compaction.js';
import { SchemaManager } from './schema-manager.js';
import { BranchManager } from './branch/branch-manager.js';
import { BranchNotFoundError } from './branch/branch-errors.js';
import { checkBranchReference, isMainBranch } from './branch/branch-names.js';
import { TableNotFoundError } from './errors.js';
import { SnapshotManager } from './snapshot-manager.js';
import type { FileStorePathFactory } from './path-factory.js';
import { metadataPaths } from './path-factory.js';
import { tableContext, type TableContext } from './table-context.js';
import type { OptionsLogger } from './core-options.js';
import { TagManager } from './tag-manager.js';
import { IncrementalRead, TableRead, type IncrementalReadOptions, type ReadOptions } from './read/table-read.js';
import { StreamRead, type StreamReadOptions } from './read/stream-read.js';
import { ConsumerManager } from './consumer-manager.js';
import type { OverwritePlan } from './row-change-plan.js';
import { newTableCommit, type NewCommitOptions, type TableCommit } from './table-commit.js';
import { commitClearing, writeAndCommit } from './row-change/one-shot-write.js';
import { deleteRows } from './row-change/delete-rows.js';
import { updateRows } from './row-change/update-rows.js';
import {
  dryRunOutcome,
  type DeleteOptions,
  type DeleteResult,
  type RowChangeDryRun,
  type UpdateChange,
  type UpdateResult,
} from './row-change/row-change-table.js';

/** Options of {@link openTable}. */
export interface OpenTableOptions {
  /** Storage to use; by default one is resolved from the location's scheme. */
  readonly fileIO?: FileIO;
  /** Settings for resolving the FileIO (e.g. S3 credentials) when `fileIO` is not given. */
  readonly storage?: ResolveFileIOOptions;
  /**
   * Branch to read and write (default `main`): its snapshots, schemas and tags live under
   * `branch/branch-<name>/`, its data files in the table's directories.
   */
  readonly branch?: string;
  /** Receives warnings about unknown table options (default `console.warn`). */
  readonly logger?: OptionsLogger;
}

/**
 * A Paimon table. Obtain one with {@link openTable} (or `Table.open`). Cheap to hold: it keeps the
 * FileIO, the derived paths, and the schema that was current when it was opened.
 */
export class Table {
  /** Reads schema versions. */
  readonly schemaManager: SchemaManager;
  /** Reads snapshots (latest, by id, by time). */
  readonly snapshotManager: SnapshotManager;
  /** Reads tags. */
  readonly tagManager: TagManager;

  /** The table directory as given. */
  readonly location: string;
  readonly fileIO: FileIO;
  /** Locations of the table's files (the context's path factory). */
  readonly paths: FileStorePathFactory;
  private readonly currentSchema: TableSchema;

  protected constructor(
    /** Storage, schema, typed options and path factory of the schema current when opened. */
    readonly context: TableContext,
    schemaManager: SchemaManager,
  ) {
    this.location = context.location;
    this.fileIO = context.fileIO;
    this.paths = context.paths;
    this.currentSchema = context.schema;
    this.schemaManager = schemaManager;
    this.snapshotManager = new SnapshotManager(this.fileIO, this.paths);
    this.tagManager = new TagManager(this.fileIO, this.paths);
  }

  /**
   * Opens the table at `location` by reading its latest schema.
   *
   * @throws TableNotFoundError when `location` holds no `schema/schema-<n>` file.
   */
  static async open(location: string, options: OpenTableOptions = {}): Promise<Table> {
    const root = location.replace(/\/+$/, '') || location;
    const branch = options.branch;
    if (branch !== undefined) checkBranchReference(branch);
    const fileIO = options.fileIO ?? resolveFileIO(root, options.storage ?? {});
    const schemaManager = new SchemaManager(fileIO, metadataPaths(root, branch));
    let schema: TableSchema;
    try {
      schema = await schemaManager.latest();
    } catch (e) {
      // A branch without schema files: say so when the table itself exists.
      if (!(e instanceof TableNotFoundError) || isMainBranch(branch)) throw e;
      if ((await new SchemaManager(fileIO, metadataPaths(root)).latestId()) === null) throw new TableNotFoundError(root);
      throw new BranchNotFoundError(branch!, root, await new BranchManager(fileIO, root).names());
    }
    const context = tableContext(fileIO, root, schema, {
      ...(branch !== undefined ? { branch } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
    });
    return new Table(context, new SchemaManager(fileIO, context.paths));
  }

  /**
   * The table of an already built context (storage, location, schema), without reading anything:
   * for callers that hold a schema and must write with exactly it (e.g. a sink's writers).
   */
  static forContext(context: TableContext): Table {
    return new Table(context, new SchemaManager(context.fileIO, context.paths));
  }

  /** The latest schema as of opening the table (see `schemaManager` for other versions). */
  schema(): TableSchema {
    return this.currentSchema;
  }

  /** Whether the table has a primary key. */
  get isPrimaryKeyTable(): boolean {
    return this.currentSchema.primaryKeys.length > 0;
  }

  /**
   * A batch read of the latest snapshot, or of a snapshot id / timestamp / tag, with optional
   * projection (`columns`), filter (`where`), `limit`, and `partition` / `bucket` restriction.
   * Nothing is read until `plan()`, `batches()` or `toArrowTable()` is called.
   */
  newRead(options: ReadOptions = {}): TableRead {
    return new TableRead(this, options);
  }

  /**
   * The rows added by the snapshots in (`fromSnapshotId`, `toSnapshotId`]; see
   * {@link IncrementalRead} for what this means for primary-key tables.
   */
  newIncrementalRead(options: IncrementalReadOptions): IncrementalRead {
    return new IncrementalRead(this, options);
  }

  /**
   * A streaming read: an async iterable of the changes of each snapshot as it is committed (see
   * {@link StreamRead} for the semantics, the start positions and consumer progress).
   */
  newStreamRead(options: StreamReadOptions = {}): StreamRead {
    return new StreamRead(this, options);
  }

  /** Consumers of streaming reads of this table (`consumer/consumer-<id>`). */
  consumers(): ConsumerManager {
    return new ConsumerManager(this.fileIO, this.paths);
  }

  // ---- write API ----------------------------------------------------------------------------

  /**
   * A writer for a batch of rows. Nothing becomes visible until its `prepareCommit()` messages are
   * committed with {@link newCommit}. Sequence numbers of each (partition, bucket) continue after
   * the largest `_MAX_SEQUENCE_NUMBER` of its live files in the latest snapshot (planned lazily,
   * once, when the first file is written).
   *
   * On a primary-key table each bucket writer compacts after its flushes, as Java Paimon's do
   * (universal compaction; `num-sorted-run.stop-trigger` makes it wait; a full compaction every
   * `full-compaction.delta-commits` commits), and its messages carry the result as
   * compactBefore / compactAfter, committed as a COMPACT snapshot after the APPEND one. Not with
   * `write-only` = true, or when `options.compactManager` says otherwise. With deletion vectors
   * (and `changelog-producer` = `lookup`) every commit also compacts level 0 away.
   *
   * Primary-key tables with dynamic buckets (`bucket` = -1) assign buckets against the latest
   * snapshot's hash index; a commit of its messages can then fail with the retryable
   * `DynamicBucketConflictError` (write the batch again with a new writer). `append`, `overwrite`
   * and `delete` do that by themselves.
   *
   * @throws NotSupportedError for postpone buckets (-2), cross-partition primary keys and
   *   `bucket-key` with dynamic buckets.
   */
  newBatchWrite(options: TableWriteOptions = {}): TableWrite {
    // Like Java's bucket-unaware append writer (it ignores previous files), sequence numbers of a
    // `bucket = -1` append table start at 0 per writer: no scan of the table before writing.
    if (options.startSequence === undefined && this.currentSchema.primaryKeys.length === 0 && this.context.options.bucket === -1) {
      return new TableWrite(this.context, options);
    }
    let live: Promise<LivePlan> | undefined;
    const liveFiles = async (partition: Uint8Array, bucket: number): Promise<DataFileMeta[]> => {
      live ??= this.plannedLiveFiles();
      // A copy: the plan is shared with the table's other writers.
      return [...((await live).files.get(bucketKey(partition, bucket)) ?? [])];
    };
    // Deletion vectors of the same snapshot as the live files, read once for all buckets.
    let dvEntries: Promise<IndexManifestEntry[]> | undefined;
    const restoreDv = async (partition: Uint8Array, bucket: number): Promise<BucketDvMaintainer> => {
      live ??= this.plannedLiveFiles();
      dvEntries ??= live.then(async ({ snapshotId }) =>
        snapshotId === null ? [] : snapshotIndexEntries(this.fileIO, this.paths, await this.snapshotManager.snapshot(snapshotId)),
      );
      const key = bucketKey(partition, bucket);
      const mine = (await dvEntries).filter((e) => e.indexType === INDEX_TYPE_DELETION_VECTORS && bucketKey(e.partition, e.bucket) === key);
      return BucketDvMaintainer.restore(this.fileIO, this.paths, mine, this.context.options.deletionVectorsBitmap64);
    };
    const startSequence =
      options.startSequence ??
      (async (partition: Uint8Array, bucket: number): Promise<bigint> => {
        let max: bigint | undefined;
        for (const f of await liveFiles(partition, bucket)) if (max === undefined || f.maxSequenceNumber > max) max = f.maxSequenceNumber;
        return max === undefined ? 0n : max + 1n;
      });
    // Writers of primary-key tables compact their buckets after flushes, as Java's do, unless the
    // table is `write-only`; with deletion vectors they also empty level 0 at every commit.
    const o = this.context.options;
    const compacts = this.isPrimaryKeyTable && !o.writeOnly;
    // An overwrite replaces the buckets it writes: a DV table's writer then compacts only its own
    // new files, from no vectors.
    const replacing = options.replacePartitions === true && o.deletionVectorsEnabled;
    const compactManager =
      options.compactManager ??
      (compacts
        ? (bucket: CompactManagerContext) =>
            writerCompactManager(
              {
                fileIO: this.fileIO,
                location: this.location,
                schema: this.currentSchema,
                schemaOf: (id) => (id === this.currentSchema.id ? Promise.resolve(this.currentSchema) : this.schemaManager.schema(id)),
              },
              bucket,
              () => (replacing ? Promise.resolve([]) : liveFiles(bucket.partition, bucket.bucket)),
              o.deletionVectorsEnabled
                ? {
                    restore: () =>
                      replacing
                        ? Promise.resolve(BucketDvMaintainer.empty(o.deletionVectorsBitmap64))
                        : restoreDv(bucket.partition, bucket.bucket),
                    writeIndexFile: bucket.writeIndexFile,
                  }
                : undefined,
              options.onCompaction,
            )
        : undefined);
    return new TableWrite(this.context, { ...options, startSequence, ...(compactManager !== undefined ? { compactManager } : {}) });
  }

  /**
   * Live files per (partition, bucket) of the latest snapshot. The plan of an earlier writer of
   * this table context (advanced by its committers past each snapshot they created on top of it)
   * is reused when the latest snapshot is still the one it describes (same id and same delta
   * manifest list, so a rollback and a new commit under the same id is told apart): one round
   * trip instead of reading the table's whole metadata.
   */
  private async plannedLiveFiles(): Promise<LivePlan> {
    const knowledge = sharedCommitKnowledge(this.context);
    const known = knowledge.livePlan;
    if (known !== null && known.snapshotId !== null) {
      const probe = await this.snapshotManager.latestFrom(known.snapshotId, 1);
      const latest = probe.latest;
      if (latest !== null && latest.id === known.snapshotId && latest.deltaManifestList === known.deltaManifestList) return known;
    }
    const plan = await this.liveFilesByBucket();
    knowledge.livePlan = plan;
    return plan;
  }

  private async liveFilesByBucket(): Promise<LivePlan> {
    const out = new Map<string, DataFileMeta[]>();
    const plan = await this.newRead().plan();
    for (const split of plan.splits)
      out.set(
        bucketKey(split.partition, split.bucket),
        split.files.map((f) => f.meta),
      );
    const snapshot = plan.snapshotId === null ? null : await this.snapshotManager.snapshot(plan.snapshotId);
    return { files: out, snapshotId: plan.snapshotId, deltaManifestList: snapshot?.deltaManifestList ?? null };
  }

  /**
   * A committer bound to one commit user (default: a fresh UUID, as Paimon's batch jobs do).
   * Reuse the same commitUser with increasing identifiers to make retries idempotent.
   *
   * Like Java Paimon, every commit that creates a snapshot is followed by snapshot expiration
   * with the table's options (`snapshot.num-retained.min` 10, `snapshot.num-retained.max`,
   * `snapshot.time-retained` 1 h, `snapshot.expire.limit` 50), unless the table option
   * `write-only` is `true` or `options.expire` is false. Before it come the table's automatic
   * tags (`tag.automatic-creation`, `tag.num-retained-max`, tag retention) and, at most once per
   * `partition.expiration-check-interval`, partition expiration (`partition.expiration-time`),
   * also not for `write-only` tables. A failed job never fails the commit: it is logged through
   * `options.logger`.
   *
   * @throws InvalidOptionError when the table option `write-only` is neither `true` nor `false`.
   */
  newCommit(options: NewCommitOptions = {}): TableCommit {
    return newTableCommit(this.context, options);
  }

  /**
   * Convenience: writes `rows` and commits them as one APPEND snapshot. On a primary-key table the
   * rows are upserts (`+I`), or carry their row kind in `options.rowKindField`.
   *
   * @returns the commit result (`committed` with the snapshot id, `skipped` when this commitUser
   *   already committed `identifier`, `empty` when there was nothing to write).
   */
  async append(rows: WriteInput, options: AppendOptions = {}): Promise<CommitResult> {
    return writeAndCommit(this, rows, options, (commit, committable, record) =>
      commitClearing(commit, { ...committable, ...(options.properties ? { properties: options.properties } : {}) }, record),
    );
  }

  /**
   * Convenience: writes `rows` and replaces existing data with them in one OVERWRITE snapshot.
   * With `partition`, exactly that (static) partition is replaced; otherwise, on a partitioned
   * table with `dynamic` (default: option `dynamic-partition-overwrite`, true), only the partitions
   * that receive rows are replaced, and else the whole table.
   *
   * With `dryRun: true` nothing is written: the rows are validated and routed to partitions, and
   * the {@link OverwritePlan} says which partitions would be replaced, with their current files
   * and rows.
   *
   * @throws CommitInputError for a `partition` naming a non-partition column, or rows outside it.
   */
  overwrite(rows: WriteInput, options: TableOverwriteOptions & { readonly dryRun: true }): Promise<OverwritePlan>;
  overwrite(rows: WriteInput, options?: TableOverwriteOptions & { readonly dryRun?: false }): Promise<CommitResult>;
  overwrite(rows: WriteInput, options?: TableOverwriteOptions): Promise<CommitResult | OverwritePlan>;
  async overwrite(rows: WriteInput, options: TableOverwriteOptions = {}): Promise<CommitResult | OverwritePlan> {
    if (options.dryRun) {
      const writer = this.newBatchWrite({ dryRun: true, replacePartitions: true });
      try {
        await writer.write(rows);
        return await this.newCommit({ expire: false }).planOverwrite(writer.routedRows(), {
          ...(options.partition !== undefined ? { partition: options.partition } : {}),
          ...(options.dynamic !== undefined ? { dynamic: options.dynamic } : {}),
        });
      } finally {
        await writer.close();
      }
    }
    return writeAndCommit(
      this,
      rows,
      options,
      async (commit, committable) => {
        const folded = foldOwnCompaction(committable);
        const result = await commit.overwrite(folded.committable, {
          ...(options.partition !== undefined ? { partition: options.partition } : {}),
          ...(options.dynamic !== undefined ? { dynamic: options.dynamic } : {}),
          ...(options.force !== undefined ? { force: options.force } : {}),
        });
        // Level-0 files the writer compacted before committing: never referenced, so gone.
        if (result.status === 'committed' && folded.unreferenced.length > 0) {
          const paths = folded.unreferenced.map(([m, f]) => this.paths.dataFilePath(m.partition, m.bucket, f.fileName, f.externalPath));
          await this.fileIO.deleteMany(paths).catch(() => undefined);
        }
        return result;
      },
      { replacePartitions: true },
    );
  }

  /**
   * Deletes rows of a primary-key table in one APPEND snapshot, by key (`keys`: objects holding
   * the primary-key columns; other properties are ignored) or by predicate (`{ where }`). The keys
   * that exist in the latest snapshot are looked up and written as `-D` records carrying their
   * current values, as Java's DELETE does; `deleted` counts them.
   *
   * On an append table with `deletion-vectors.enabled`, `{ where }` marks the matching rows of the
   * latest snapshot deleted in deletion vectors (no data file is rewritten) in one OVERWRITE
   * snapshot; `deleted` counts the rows.
   *
   * With `options.dryRun` the rows are looked up and a {@link RowChangeDryRun} returned: the
   * figures in `plan`, and `skipped` when the identifier was already committed; no file is
   * written. A real run returns the same `plan` for what it did.
   *
   * @throws NotSupportedError on append tables without deletion vectors (naming the option), and for merge engines where `-D` does not delete
   *   (first-row; partial-update and aggregation without `*.remove-record-on-delete`).
   * @throws WriteValidationError for a key object missing a primary-key column.
   * @throws PredicateError for a predicate that does not parse or names an unknown column.
   */
  delete(
    keysOrWhere: readonly RowObject[] | { readonly where: string },
    options: DeleteOptions & { readonly dryRun: true },
  ): Promise<RowChangeDryRun>;
  delete(
    keysOrWhere: readonly RowObject[] | { readonly where: string },
    options?: DeleteOptions & { readonly dryRun?: false },
  ): Promise<DeleteResult>;
  delete(keysOrWhere: readonly RowObject[] | { readonly where: string }, options?: DeleteOptions): Promise<DeleteResult | RowChangeDryRun>;
  async delete(
    keysOrWhere: readonly RowObject[] | { readonly where: string },
    options: DeleteOptions = {},
  ): Promise<DeleteResult | RowChangeDryRun> {
    const r = await deleteRows(this, keysOrWhere, options);
    return r.dryRun ? dryRunOutcome(r) : { deleted: r.deleted, result: r.result!, plan: r.plan, dryRun: false };
  }

  /**
   * Sets columns of the rows matching `change.where` (the `newRead({ where })` syntax) to the
   * values in `change.set` (in the forms `append` accepts), in one snapshot; `updated` counts the
   * rows.
   *
   * - Primary-key tables: the matching rows of the latest snapshot are read and written back with
   *   the new values (upserts); primary-key columns cannot be set. Like any read-then-write, an
   *   upsert of the same key committed in between is overwritten.
   * - Append tables with `deletion-vectors.enabled`: the matching rows are marked deleted in
   *   deletion vectors and their new versions are written to new data files, committed together
   *   (a concurrent change of the same vectors makes it plan again).
   *
   * With `options.dryRun` the rows are looked up and a {@link RowChangeDryRun} returned: the
   * figures in `plan`, and `skipped` when the identifier was already committed; no file is
   * written. A real run returns the same `plan` for what it did.
   *
   * @throws NotSupportedError on append tables without deletion vectors (naming the option), and
   *   for merge engines whose writes are not plain replacements (aggregation, first-row).
   * @throws WriteValidationError naming the column for an unknown, refused or mistyped assignment,
   *   and for one the merge engine would ignore: a null on a partial-update table, a lower or null
   *   `sequence.field` (or sequence group) value than a matched row's.
   * @throws PredicateError for a predicate that does not parse or names an unknown column.
   */
  update(change: UpdateChange, options: DeleteOptions & { readonly dryRun: true }): Promise<RowChangeDryRun>;
  update(change: UpdateChange, options?: DeleteOptions & { readonly dryRun?: false }): Promise<UpdateResult>;
  update(change: UpdateChange, options?: DeleteOptions): Promise<UpdateResult | RowChangeDryRun>;
  async update(change: UpdateChange, options: DeleteOptions = {}): Promise<UpdateResult | RowChangeDryRun> {
    const r = await updateRows(this, change, options);
    return r.dryRun ? dryRunOutcome(r) : { updated: r.deleted, result: r.result!, plan: r.plan, dryRun: false };
  }

  /**
   * Creates tag `name` on the latest snapshot (or `options.snapshotId`), retained for
   * `options.timeRetained`, else for the table option `tag.default-time-retained` when set.
   */
  createTag(name: string, options: CreateTagOptions = {}): Promise<Tag> {
    const retained = this.context.options.tagDefaultTimeRetainedMs;
    const timeRetained = options.timeRetained ?? (retained === null ? undefined : tagDurationOf(retained));
    return createTag(this.fileIO, this.paths, name, { ...options, ...(timeRetained !== undefined ? { timeRetained } : {}) });
  }

  /** Each partition of the latest snapshot (or `snapshotId`) with its records, files, size and last update (Paimon's `$partitions`). */
  async partitions(options: { readonly snapshotId?: number; readonly signal?: AbortSignal } = {}): Promise<PartitionEntry[]> {
    const snapshots = new SnapshotManager(this.fileIO, this.paths);
    const snapshot = options.snapshotId !== undefined ? await snapshots.snapshotInChain(options.snapshotId) : await snapshots.latest();
    return snapshot === null ? [] : listPartitionEntries(this.context, snapshot, options);
  }

  /** Drops the partitions matching `specs` in one OVERWRITE snapshot (see `dropPartitions`). */
  dropPartitions(specs: readonly Readonly<Record<string, string>>[], options: DropPartitionsOptions = {}): Promise<DropPartitionsSummary> {
    return dropPartitions(this.context, specs, options);
  }

  /** Drops the expired partitions (see `expirePartitions`; settings from the table options unless given). */
  expirePartitions(options: ExpirePartitionsOptions = {}): Promise<ExpirePartitionsSummary> {
    return expirePartitions(this.context, options);
  }

  /** Deletes tag `name`; throws TagNotFoundError when it does not exist. */
  deleteTag(name: string): Promise<void> {
    return deleteTag(this.fileIO, this.paths, name);
  }

  /** Every tag with its snapshot, ordered by snapshot id then name. */
  listTags(): Promise<Array<{ name: string; tag: Tag }>> {
    return listTags(this.fileIO, this.paths);
  }

  /**
   * Rolls the table back to snapshot `target` (number) or tag `target` (string); see `rollbackTo`.
   * Stop writers first: rollback is not safe against concurrent commits (as in Paimon).
   */
  rollbackTo(target: number | string, options: RollbackOptions = {}): Promise<RollbackResult> {
    return rollbackTo(this.fileIO, this.paths, target, options);
  }

  /** The branch this table reads and writes (`main` unless opened with `branch`). */
  get branch(): string {
    return this.paths.branch;
  }

  /**
   * The table's branches, seen from this one: {@link BranchManager.create} makes a branch from
   * this branch's schemas or tags, {@link BranchManager.fastForward} moves this branch.
   */
  branches(): BranchManager {
    return new BranchManager(this.fileIO, this.location, this.branch);
  }

  /** Releases the FileIO's clients. Call when done with a table opened without a `fileIO`. */
  async close(): Promise<void> {
    await this.fileIO.close();
  }
}

/** Options of {@link Table.append}. */
export interface AppendOptions {
  /** Commit user; default a fresh UUID. Give a stable one with `identifier` for idempotent retries. */
  readonly commitUser?: string;
  /** Primary-key tables: the input field holding each row's kind (`+I`, `-U`, `+U`, `-D`); see {@link TableWriteOptions.rowKindField}. */
  readonly rowKindField?: string;
  /** Commit identifier (default Long.MAX, the batch identifier, which is never de-duplicated). */
  readonly identifier?: bigint | number;
  /** Snapshot `properties`. */
  readonly properties?: Readonly<Record<string, string>>;
  /** Expire snapshots after the commit (default true unless the table is `write-only`); see {@link Table.newCommit}. */
  readonly expire?: boolean;
}

/** Options of {@link Table.overwrite}. */
export interface TableOverwriteOptions {
  /** Static partition to replace, values as in partition directory names (`{ dt: '2024-05-01' }`). */
  readonly partition?: Readonly<Record<string, string>>;
  /** Dynamic partition overwrite (default: table option `dynamic-partition-overwrite`, true). */
  readonly dynamic?: boolean;
  /** Create a snapshot even when nothing changes. */
  readonly force?: boolean;
  /**
   * Plan only: validate the rows and report the partitions the overwrite would replace (an
   * {@link OverwritePlan}), writing no file at all.
   */
  readonly dryRun?: boolean;
  readonly commitUser?: string;
  readonly identifier?: bigint | number;
  /** Expire snapshots after the commit (default true unless the table is `write-only`); see {@link Table.newCommit}. */
  readonly expire?: boolean;
}

/**
 * An overwrite's writer may compact its own new files before committing (deletion-vector tables
 * always do, so that the rows are visible): the compaction outputs become the overwrite's new
 * files and its DV files new index files. Folded only when every compacted file is one of the
 * commit's new files; the compacted-away files are returned to be deleted after the commit.
 */
function foldOwnCompaction(committable: Committable): {
  committable: Committable;
  unreferenced: Array<[CommitMessage, DataFileMeta]>;
} {
  const unreferenced: Array<[CommitMessage, DataFileMeta]> = [];
  const messages = committable.messages.map((m) => {
    const before = m.compactBefore ?? [];
    if (before.length === 0 && (m.compactAfter ?? []).length === 0 && (m.compactNewIndexFiles ?? []).length === 0) return m;
    const fresh = new Set(m.newFiles.map((f) => f.fileName));
    if (!before.every((f) => fresh.has(f.fileName)) || (m.compactDeletedIndexFiles ?? []).length > 0) return m;
    const after = m.compactAfter ?? [];
    const kept = new Set(after.map((f) => f.fileName));
    const gone = new Set(before.map((f) => f.fileName));
    for (const f of m.newFiles) if (gone.has(f.fileName) && !kept.has(f.fileName)) unreferenced.push([m, f]);
    const folded: CommitMessage = {
      partition: m.partition,
      bucket: m.bucket,
      totalBuckets: m.totalBuckets,
      newFiles: [...m.newFiles.filter((f) => !gone.has(f.fileName)), ...after],
      ...(m.newChangelogFiles !== undefined ? { newChangelogFiles: m.newChangelogFiles } : {}),
      ...(m.newIndexFiles !== undefined || m.compactNewIndexFiles !== undefined
        ? { newIndexFiles: [...(m.newIndexFiles ?? []), ...(m.compactNewIndexFiles ?? [])] }
        : {}),
      ...(m.indexBaseSnapshotId !== undefined ? { indexBaseSnapshotId: m.indexBaseSnapshotId } : {}),
    };
    return folded;
  });
  return { committable: { ...committable, messages }, unreferenced };
}

function bucketKey(partition: Uint8Array, bucket: number): string {
  return `${bucket}|${Buffer.from(partition.buffer, partition.byteOffset, partition.byteLength).toString('hex')}`;
}

/** Opens the Paimon table at `location` (local path, `file://…`, `s3://bucket/…/db.db/t`). */
export function openTable(location: string, options: OpenTableOptions = {}): Promise<Table> {
  return Table.open(location, options);
}

/**
 * Convenience: opens the table at `location`, reads it with `options` and returns one Arrow Table.
 * The FileIO is closed afterwards unless one was passed in.
 */
export async function readTable(location: string, options: ReadOptions & OpenTableOptions = {}): Promise<arrow.Table> {
  const table = await openTable(location, options);
  try {
    return await table.newRead(options).toArrowTable();
  } finally {
    if (!options.fileIO) await table.close();
  }
}
