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
import { randomUUID } from 'node:crypto';
import type * as arrow from 'apache-arrow';
import { resolveFileIO, type FileIO, type ResolveFileIOOptions } from '@tidemark/storage';
import { BATCH_COMMIT_IDENTIFIER, type Tag, type TableSchema } from '@tidemark/format';
import type { Committable } from './commit-message.js';
import {
  FileStoreCommit,
  type CommitCallOptions,
  type CommitResult,
  type FileStoreCommitOptions,
  type OverwriteCallOptions,
} from './commit/file-store-commit.js';
import { commitNotApplied } from './commit/commit-errors.js';
import { rollbackTo, type RollbackOptions, type RollbackResult } from './rollback.js';
import { createTag, deleteTag, listTags, type CreateTagOptions } from './tags.js';
import { TableWrite, type TableWriteOptions, type WriteInput } from './write/table-write.js';
import { SchemaManager } from './schema-manager.js';
import { SnapshotManager } from './snapshot-manager.js';
import type { FileStorePathFactory } from './path-factory.js';
import { metadataPaths } from './path-factory.js';
import { tableContext, type TableContext } from './table-context.js';
import type { OptionsLogger } from './core-options.js';
import { TagManager } from './tag-manager.js';
import { IncrementalRead, TableRead, type IncrementalReadOptions, type ReadOptions } from './read/table-read.js';
import { expireAfterCommit } from './expire/auto-expire.js';

/** Options of {@link openTable}. */
export interface OpenTableOptions {
  /** Storage to use; by default one is resolved from the location's scheme. */
  readonly fileIO?: FileIO;
  /** Settings for resolving the FileIO (e.g. S3 credentials) when `fileIO` is not given. */
  readonly storage?: ResolveFileIOOptions;
  /** Branch to read (default `main`). */
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
    const fileIO = options.fileIO ?? resolveFileIO(root, options.storage ?? {});
    const schemaManager = new SchemaManager(fileIO, metadataPaths(root, options.branch || undefined));
    const schema = await schemaManager.latest();
    const context = tableContext(fileIO, root, schema, {
      ...(options.branch ? { branch: options.branch } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
    });
    return new Table(context, new SchemaManager(fileIO, context.paths));
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

  // ---- write API ----------------------------------------------------------------------------

  /**
   * A writer for a batch of rows. Nothing becomes visible until its `prepareCommit()` messages are
   * committed with {@link newCommit}. Sequence numbers of each (partition, bucket) continue after
   * the largest `_MAX_SEQUENCE_NUMBER` of its live files in the latest snapshot (planned lazily,
   * once, when the first file is written).
   *
   * @throws NotSupportedError for primary-key tables (their write path is not built yet).
   */
  newBatchWrite(options: TableWriteOptions = {}): TableWrite {
    // Like Java's bucket-unaware append writer (it ignores previous files), sequence numbers of a
    // `bucket = -1` append table start at 0 per writer: no scan of the table before writing.
    if (options.startSequence === undefined && this.currentSchema.primaryKeys.length === 0 && this.context.options.bucket === -1) {
      return new TableWrite(this.context, options);
    }
    let maxima: Promise<Map<string, bigint>> | undefined;
    const startSequence =
      options.startSequence ??
      (async (partition: Uint8Array, bucket: number): Promise<bigint> => {
        maxima ??= this.maxSequenceNumbers();
        const max = (await maxima).get(bucketKey(partition, bucket));
        return max === undefined ? 0n : max + 1n;
      });
    return new TableWrite(this.context, { ...options, startSequence });
  }

  /** Max `_MAX_SEQUENCE_NUMBER` per (partition, bucket) over the live files of the latest snapshot. */
  private async maxSequenceNumbers(): Promise<Map<string, bigint>> {
    const out = new Map<string, bigint>();
    const plan = await this.newRead().plan();
    for (const split of plan.splits) {
      const key = bucketKey(split.partition, split.bucket);
      let max = out.get(key);
      for (const f of split.files) if (max === undefined || f.meta.maxSequenceNumber > max) max = f.meta.maxSequenceNumber;
      if (max !== undefined) out.set(key, max);
    }
    return out;
  }

  /**
   * A committer bound to one commit user (default: a fresh UUID, as Paimon's batch jobs do).
   * Reuse the same commitUser with increasing identifiers to make retries idempotent.
   *
   * Like Java Paimon, every commit that creates a snapshot is followed by snapshot expiration
   * with the table's options (`snapshot.num-retained.min` 10, `snapshot.num-retained.max`,
   * `snapshot.time-retained` 1 h, `snapshot.expire.limit` 50), unless the table option
   * `write-only` is `true` or `options.expire` is false. A failed expiration never fails the
   * commit: it is logged through `options.logger`.
   *
   * @throws InvalidOptionError when the table option `write-only` is neither `true` nor `false`.
   */
  newCommit(options: NewCommitOptions = {}): TableCommit {
    return newTableCommit(this.context, options);
  }

  /**
   * Convenience: writes `rows` and commits them as one APPEND snapshot.
   *
   * @returns the commit result (`committed` with the snapshot id, `skipped` when this commitUser
   *   already committed `identifier`, `empty` when there was nothing to write).
   */
  async append(rows: WriteInput, options: AppendOptions = {}): Promise<CommitResult> {
    return this.writeAndCommit(rows, options, (commit, committable) =>
      commit.commit({ ...committable, ...(options.properties ? { properties: options.properties } : {}) }),
    );
  }

  /**
   * Convenience: writes `rows` and replaces existing data with them in one OVERWRITE snapshot.
   * With `partition`, exactly that (static) partition is replaced; otherwise, on a partitioned
   * table with `dynamic` (default: option `dynamic-partition-overwrite`, true), only the partitions
   * that receive rows are replaced, and else the whole table.
   */
  async overwrite(rows: WriteInput, options: TableOverwriteOptions = {}): Promise<CommitResult> {
    return this.writeAndCommit(rows, options, (commit, committable) =>
      commit.overwrite(committable, {
        ...(options.partition !== undefined ? { partition: options.partition } : {}),
        ...(options.dynamic !== undefined ? { dynamic: options.dynamic } : {}),
        ...(options.force !== undefined ? { force: options.force } : {}),
      }),
    );
  }

  /**
   * The shared path of {@link append} and {@link overwrite}: opens a commit for the options' user,
   * returns `skipped` before writing any data file when the identifier is already committed, else
   * writes `rows` and hands the committable to `commit`.
   */
  private async writeAndCommit(
    rows: WriteInput,
    options: Pick<AppendOptions, 'commitUser' | 'identifier' | 'expire'>,
    commit: (tableCommit: TableCommit, committable: Committable) => Promise<CommitResult>,
  ): Promise<CommitResult> {
    const tableCommit = this.newCommit({
      ...(options.commitUser !== undefined ? { commitUser: options.commitUser } : {}),
      ...(options.expire !== undefined ? { expire: options.expire } : {}),
    });
    const identifier = toIdentifier(options.identifier);
    if (identifier !== BATCH_COMMIT_IDENTIFIER) {
      const todo = await tableCommit.filterCommitted([{ identifier, messages: [] }]);
      if (todo.length === 0) return skipped(tableCommit.commitUser, identifier);
    }
    return this.writeThen(rows, (messages) => commit(tableCommit, { identifier, messages }));
  }

  /**
   * Writes `rows`, then runs `commit` on the messages. The writer stays open until the commit has
   * finished: its in-flight record is what keeps orphan cleanup away from the new data files
   * until a snapshot references them.
   */
  private async writeThen<T>(
    rows: WriteInput,
    commit: (messages: Awaited<ReturnType<TableWrite['prepareCommit']>>) => Promise<T>,
  ): Promise<T> {
    const writer = this.newBatchWrite();
    let messages: Awaited<ReturnType<TableWrite['prepareCommit']>>;
    try {
      await writer.write(rows);
      messages = await writer.prepareCommit();
    } catch (e) {
      await writer.abort().catch(() => undefined);
      await writer.close().catch(() => undefined);
      throw e;
    }
    try {
      return await commit(messages);
    } catch (e) {
      if (commitNotApplied(e)) await writer.discard(messages).catch(() => undefined);
      throw e;
    } finally {
      await writer.close();
    }
  }

  /** Creates tag `name` on the latest snapshot (or `options.snapshotId`). */
  createTag(name: string, options: CreateTagOptions = {}): Promise<Tag> {
    return createTag(this.fileIO, this.paths, name, options);
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

  /** Releases the FileIO's clients. Call when done with a table opened without a `fileIO`. */
  async close(): Promise<void> {
    await this.fileIO.close();
  }
}

/** Options of {@link Table.newCommit}. */
export interface NewCommitOptions extends FileStoreCommitOptions {
  /** Commit user; default a fresh UUID (one per batch job, as in Paimon). */
  readonly commitUser?: string;
  /**
   * Expire snapshots after each commit that creates one (default true; never when the table
   * option `write-only` is `true`). See {@link Table.newCommit}.
   */
  readonly expire?: boolean;
}

/** Per-call switch of the automatic snapshot expiration of {@link TableCommit}. */
export interface AutoExpireCallOption {
  /**
   * `false` skips the automatic expiration after this call. `true` cannot enable it where the
   * committer or the table (`write-only`) disabled it.
   */
  readonly expire?: boolean;
}

/** Options of {@link Table.append}. */
export interface AppendOptions {
  /** Commit user; default a fresh UUID. Give a stable one with `identifier` for idempotent retries. */
  readonly commitUser?: string;
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
  readonly commitUser?: string;
  readonly identifier?: bigint | number;
  /** Expire snapshots after the commit (default true unless the table is `write-only`); see {@link Table.newCommit}. */
  readonly expire?: boolean;
}

/**
 * The commit path every writer uses (tables, the sink's committer, compaction): a committer for
 * the table of `context`, bound to one commit user. Its {@link FileStoreCommit} verifies on S3,
 * before the first snapshot, that the store refuses a second `If-None-Match: *` PUT; after each
 * commit that created a snapshot it expires snapshots with the table's options (unless the table
 * is `write-only` or `options.expire` is false). See {@link Table.newCommit}.
 *
 * @throws InvalidOptionError when the table option `write-only` is neither `true` nor `false`.
 */
export function newTableCommit(context: TableContext, options: NewCommitOptions = {}): TableCommit {
  const commitUser = options.commitUser ?? randomUUID();
  const { expire, ...storeOptions } = options;
  const inner = new FileStoreCommit(context, { checkBaseDataFiles: true, ...storeOptions });
  const logger = options.logger ?? context.logger;
  const autoExpire =
    expire !== false && !context.options.writeOnly
      ? async (): Promise<void> => {
          await expireAfterCommit(context, { ...(options.now !== undefined ? { now: options.now } : {}), logger });
        }
      : null;
  return new TableCommit(inner, commitUser, () => Promise.resolve(), autoExpire);
}

/**
 * A {@link FileStoreCommit} bound to one commit user (from {@link newTableCommit}). After each
 * call that created a snapshot it runs `autoExpire` (snapshot expiration, see {@link Table.newCommit}),
 * unless the call passes `expire: false`; `autoExpire` must not throw (failures are logged).
 */
export class TableCommit {
  constructor(
    /** The underlying committer (for options not exposed here). */
    readonly fileStoreCommit: FileStoreCommit,
    readonly commitUser: string,
    private readonly beforeCommit: () => Promise<void> = () => Promise.resolve(),
    private readonly autoExpire: (() => Promise<void>) | null = null,
  ) {}

  /**
   * Commits `committable` (identifier default Long.MAX) as an APPEND (and COMPACT) snapshot;
   * returns `skipped` when this user already committed the identifier. Then expires snapshots
   * (see {@link Table.newCommit}) unless `options.expire` is false.
   */
  async commit(committable: CommittableInput, options: Omit<CommitCallOptions, 'commitUser'> & AutoExpireCallOption = {}): Promise<CommitResult> {
    const { expire, ...callOptions } = options;
    await this.beforeCommit();
    const result = await this.fileStoreCommit.commit(normalize(committable), { ...callOptions, commitUser: this.commitUser });
    await this.afterCommit([result], expire);
    return result;
  }

  /**
   * Overwrites partitions with the committable's new files (see `FileStoreCommit.overwrite`), then
   * expires snapshots unless `options.expire` is false.
   */
  async overwrite(committable: CommittableInput, options: Omit<OverwriteCallOptions, 'commitUser'> & AutoExpireCallOption = {}): Promise<CommitResult> {
    const { expire, ...callOptions } = options;
    await this.beforeCommit();
    const result = await this.fileStoreCommit.overwrite(normalize(committable), { ...callOptions, commitUser: this.commitUser });
    await this.afterCommit([result], expire);
    return result;
  }

  /** The committables this user has not committed yet, sorted by identifier. */
  filterCommitted(committables: readonly Committable[]): Promise<Committable[]> {
    return this.fileStoreCommit.filterCommitted(committables, this.commitUser);
  }

  /**
   * Recovery: commits every committable this user has not committed yet, in identifier order,
   * then expires snapshots once (when any was committed) unless `options.expire` is false.
   */
  async filterAndCommit(committables: readonly Committable[], options: { readonly force?: boolean } & AutoExpireCallOption = {}): Promise<CommitResult[]> {
    const { expire, ...callOptions } = options;
    await this.beforeCommit();
    const results = await this.fileStoreCommit.filterAndCommit(committables, this.commitUser, callOptions);
    await this.afterCommit(results, expire);
    return results;
  }

  /** Runs the automatic expiration when a snapshot was created and neither side disabled it. */
  private async afterCommit(results: readonly CommitResult[], expire: boolean | undefined): Promise<void> {
    if (this.autoExpire === null || expire === false) return;
    if (!results.some((r) => r.status === 'committed')) return;
    // Best effort by contract; guard anyway so that a commit that succeeded is never reported as failed.
    await this.autoExpire().catch(() => undefined);
  }
}

/** A {@link Committable} whose identifier may be omitted (Long.MAX) or given as a number. */
export type CommittableInput = Omit<Committable, 'identifier'> & { readonly identifier?: bigint | number };

function normalize(c: CommittableInput): Committable {
  return { ...c, identifier: toIdentifier(c.identifier) };
}

function toIdentifier(id: bigint | number | undefined): bigint {
  if (id === undefined) return BATCH_COMMIT_IDENTIFIER;
  if (typeof id === 'number' && !Number.isSafeInteger(id)) throw new RangeError(`commit identifier ${id} is not a safe integer; pass a bigint`);
  return BigInt(id);
}

function skipped(user: string, identifier: bigint): CommitResult {
  return { status: 'skipped', reason: `commit identifier ${identifier} of commit user '${user}' was already committed` };
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
