/**
 * What `Table.delete` and `Table.update` take and return, the part of a table they need, and the
 * pieces both use (dry-run outcomes, the plan of a primary-key change).
 */
import type * as arrow from 'apache-arrow';
import type { CommitResult } from '../commit/file-store-commit.js';
import type { FileStorePathFactory } from '../path-factory.js';
import type { AppendDeleteOptions } from '../deletion-vectors/append-delete.js';
import type { ReadContext, ReadOptions, TableRead } from '../read/table-read.js';
import { partitionRowsOf, type RowChangePlan, type RowChangeProgress } from '../row-change-plan.js';
import { skippedAs, toIdentifier } from '../table-commit.js';
import type { RowObject } from '../write/table-write.js';
import type { WritingTable } from './one-shot-write.js';

/** What deletes and updates need of their table (a `Table` provides it). */
export interface RowChangeTable extends ReadContext, WritingTable {
  /** The table directory as given (named in errors). */
  readonly location: string;
  /** The path factory of the latest schema (a redone dropped compaction writes with it). */
  readonly paths: FileStorePathFactory;
  newRead(options?: ReadOptions): TableRead;
}

/** Options of `Table.delete`. */
export interface DeleteOptions {
  readonly commitUser?: string;
  readonly identifier?: bigint | number;
  /** Expire snapshots after the commit (default true unless the table is `write-only`); see `Table.newCommit`. */
  readonly expire?: boolean;
  /**
   * Plan only: find the matching rows in the latest snapshot and report them in the result's
   * `plan`, writing no file at all (no data file, deletion vector, manifest or snapshot).
   */
  readonly dryRun?: boolean;
  /** Called as the rows are looked for, and when writing and committing start (cheap; may be called often). */
  readonly onProgress?: (progress: RowChangeProgress) => void;
}

/** The change of `Table.update`: which rows, and their new column values. */
export interface UpdateChange {
  /** Predicate selecting the rows (the `newRead({ where })` syntax). */
  readonly where: string;
  /** Column name → new value. */
  readonly set: RowObject;
}

/** What `Table.update` did. */
export interface UpdateResult {
  /** Rows updated (0 unless the commit happened). */
  readonly updated: number;
  readonly result: CommitResult;
  /** What the update changed: the figures a dry run ({@link RowChangeDryRun}) reports beforehand. */
  readonly plan: RowChangePlan;
  readonly dryRun: false;
}

/** What `Table.delete` did. */
export interface DeleteResult {
  /** Keys (append tables: rows) that existed in the latest snapshot and were deleted (0 unless the commit happened). */
  readonly deleted: number;
  readonly result: CommitResult;
  /** What the delete changed: the figures a dry run ({@link RowChangeDryRun}) reports beforehand. */
  readonly plan: RowChangePlan;
  readonly dryRun: false;
}

/** What a dry run of `Table.delete` or `Table.update` found; nothing was written. */
export interface RowChangeDryRun {
  readonly dryRun: true;
  /** What the change would do, planned against the latest snapshot. */
  readonly plan: RowChangePlan;
  /** Set when the commit user already committed the identifier: the real run would skip, for this reason. */
  readonly skipped?: string;
}

/** A delete or update as the implementations return it; `result` is null for a dry run unless it would skip. */
export interface RowChange {
  readonly deleted: number;
  readonly result: CommitResult | null;
  readonly plan: RowChangePlan;
  readonly dryRun: boolean;
}

/** The dry-run result of a change. */
export function dryRunOutcome(r: RowChange): RowChangeDryRun {
  return { dryRun: true, plan: r.plan, ...(r.result?.status === 'skipped' ? { skipped: r.result.reason } : {}) };
}

/** The plan of a delete that found nothing to plan against (append tables). */
export function emptyDvPlan(): RowChangePlan {
  return { baseSnapshotId: null, rowsMatched: 0, method: 'deletion-vectors', partitions: [], deletionVectorFiles: [] };
}

/** {@link DeleteOptions} as the append-table delete takes them. */
export function appendDeleteOptions(options: DeleteOptions): AppendDeleteOptions {
  return {
    ...(options.commitUser !== undefined ? { commitUser: options.commitUser } : {}),
    ...(options.expire !== undefined ? { expire: options.expire } : {}),
    ...(options.identifier !== undefined ? { identifier: toIdentifier(options.identifier) } : {}),
    ...(options.dryRun !== undefined ? { dryRun: options.dryRun } : {}),
    ...(options.onProgress !== undefined ? { onProgress: options.onProgress } : {}),
  };
}

/** The plan of a primary-key delete or update: the rows found, per partition. */
export function primaryKeyPlan(table: RowChangeTable, baseSnapshotId: number | null, found: readonly arrow.RecordBatch[]): RowChangePlan {
  return {
    baseSnapshotId,
    rowsMatched: found.reduce((n, b) => n + b.numRows, 0),
    method: 'primary-key-records',
    partitions: partitionRowsOf(table.context.paths, table.context.schema, found),
    deletionVectorFiles: [],
  };
}

/**
 * A dry run with an identifier its commit user already committed: the real run would skip, so
 * the dry run says so instead of planning.
 */
export async function dryRunSkipped(table: RowChangeTable, options: DeleteOptions): Promise<CommitResult | null> {
  if (!options.dryRun || options.identifier === undefined || options.commitUser === undefined) return null;
  const identifier = toIdentifier(options.identifier);
  return skippedAs(table.newCommit({ commitUser: options.commitUser, expire: false }), identifier);
}
